/**
 * A task between its command's end and its workflow's close: the command's output is then in the
 * attempt's completion, no longer in any heartbeat. The attempt here completes asynchronously once
 * its worker is gone, so the workflow stays in that state for as long as the test needs.
 */
import { CompleteAsyncError, Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import type { CommandOutcome } from '../../src/shared/task.js';
import { withStandInWorker } from '../helpers/stand-in-worker.js';
import { useDevServer } from '../helpers/temporal-env.js';

const server = useDevServer();

const outcome: CommandOutcome = {
  exitCode: 0,
  signal: null,
  stdout: { bytes: 6, tailBase64: Buffer.from('ended\n').toString('base64') },
  stderr: { bytes: 0, tailBase64: '' },
  host: 'stand-in',
};

describe('a task whose command ended but whose workflow has not closed', () => {
  it("shows the ended command's output to a snapshot and ends a wait at once, never shows nothing", async () => {
    let taskToken: Uint8Array | undefined;
    let tasks: BashTasks | undefined;
    const taskId = await withStandInWorker(
      server.env,
      {
        async runCommand(_spec, _queue, started) {
          taskToken = Context.current().info.taskToken;
          started();
          throw new CompleteAsyncError();
        },
        stopCommand: () => Promise.resolve({ kind: 'never-started' }),
      },
      async (taskQueue, commandStarted) => {
        tasks = new BashTasks({ client: server.env.client, taskQueue });
        const id = await tasks.start({ command: 'echo ended', description: 'closing', background: true });
        await commandStarted;
        return id;
      },
    );
    // The worker is gone: the completion lands, and no workflow task will close the run.
    await server.env.client.activity.complete(taskToken as Uint8Array, outcome);
    if (tasks === undefined) throw new Error('no client');

    const snapshot = await tasks.snapshot(taskId, undefined);
    expect(snapshot.state).toEqual({ status: 'running' });
    expect(snapshot.final).toBe(false);
    expect(snapshot.stdout.bytes).toBe(6);
    expect(snapshot.host).toBe('stand-in');

    const waitStarted = Date.now();
    await tasks.waitForOutput(taskId, undefined, 30_000);
    // The output is there already: the wait ends on its first look (plus the closing wait).
    expect(Date.now() - waitStarted).toBeLessThan(15_000);

    await server.env.client.workflow.getHandle(taskId).terminate('test over');
  });
});
