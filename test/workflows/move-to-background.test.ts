/**
 * A foreground run moved to the background, on the time-skipping test server: its 2-hour timeout no
 * longer fires while its command runs for 3 hours. The command activities are stand-ins (see
 * time-skipping.test.ts for how the server's clock moves): the foreground attempt lets go of the
 * command when cancelled by the move, as the real one does, and the background attempt that takes
 * over releases its own hold on the clock for the command's 3 hours.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import {
  AttemptFailureType,
  type CommandOutcome,
  type CommandSpec,
  type StopResult,
} from '../../src/shared/task.js';
import { type bashTask, moveToBackgroundUpdate } from '../../src/workflows/bash-task.js';
import { heartbeatUntilCancelled, withStandInWorker } from '../helpers/stand-in-worker.js';

const HOUR_MS = 60 * 60_000;

import { useTimeSkippingServer } from '../helpers/temporal-env.js';

const server = useTimeSkippingServer();

const ended: CommandOutcome = {
  exitCode: 0,
  signal: null,
  stdout: { bytes: 5, tailBase64: Buffer.from('done\n').toString('base64') },
  stderr: { bytes: 0, tailBase64: '' },
  host: 'stand-in',
};

/** Runs `body` with stand-in activities on a queue of its own; `attempts` records each command attempt's spec. */
function withStandIns<T>(
  body: (taskQueue: string, commandStarted: Promise<void>) => Promise<T>,
  attempts: CommandSpec[],
): Promise<T> {
  return withStandInWorker(
    server.env,
    {
      spec: { lostAfterMs: 4 * HOUR_MS, heartbeatTimeoutMs: 4 * HOUR_MS },
      async stopCommand(): Promise<StopResult> {
        return { kind: 'ended', outcome: { ...ended, exitCode: null, signal: 'SIGTERM' } };
      },
      async runCommand(spec, _taskQueue, started): Promise<CommandOutcome> {
        attempts.push(spec);
        started();
        if (spec.command === 'true') return ended;
        if (spec.background && spec.command === 'sleep 10800') {
          // The command's remaining 3 hours, skipped.
          await server.env.sleep(3 * HOUR_MS);
          return ended;
        }
        await heartbeatUntilCancelled();
        if (spec.background) return { ...ended, exitCode: null, signal: 'SIGTERM' };
        throw ApplicationFailure.create({
          type: AttemptFailureType.released,
          message: 'moved to the background',
          nonRetryable: true,
        });
      },
    },
    body,
  );
}

describe('moveToBackground', () => {
  it('cancels a 2-hour foreground timeout: the moved command runs 3 hours and completes', async () => {
    const attempts: CommandSpec[] = [];
    const result = await withStandIns(async (taskQueue, commandStarted) => {
      const tasks = new BashTasks({ client: server.env.client, taskQueue });
      const taskId = await tasks.start({
        command: 'sleep 10800',
        description: 'Three hours',
        background: false,
        timeoutMs: 2 * HOUR_MS,
      });
      await commandStarted;
      expect(await tasks.moveToBackground(taskId, undefined)).toBe(true);
      // A second move is refused: the run is no longer in the foreground.
      expect(await tasks.moveToBackground(taskId, undefined)).toBe(false);
      const handle = server.env.client.workflow.getHandle<typeof bashTask>(taskId);
      const value = await handle.result();
      expect((await handle.describe()).memo?.background).toBe(true);
      return value;
    }, attempts);
    expect(result.timedOutAfterMs).toBeUndefined();
    expect({ exitCode: result.exitCode, signal: result.signal }).toEqual({ exitCode: 0, signal: null });
    expect(attempts.map((spec) => ({ timeoutMs: spec.timeoutMs, background: spec.background }))).toEqual([
      { timeoutMs: 2 * HOUR_MS, background: false },
      { timeoutMs: undefined, background: true },
    ]);
    expect(attempts[1]?.commandStarted).toBe(true);
  });

  it('refuses to move a background run, and a run that has ended', async () => {
    const attempts: CommandSpec[] = [];
    await withStandIns(async (taskQueue, commandStarted) => {
      const tasks = new BashTasks({ client: server.env.client, taskQueue });
      const taskId = await tasks.start({
        command: 'sleep infinity',
        description: 'Background',
        background: true,
      });
      await commandStarted;
      const handle = server.env.client.workflow.getHandle<typeof bashTask>(taskId);
      const refusal = await handle
        .executeUpdate(moveToBackgroundUpdate, { args: [{ expiresAtMs: Number.MAX_SAFE_INTEGER }] })
        .catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((refusal as WorkflowUpdateFailedError).cause?.message).toBe(
        `task ${taskId} cannot move to the background: it is not running in the foreground`,
      );
      await tasks.kill(taskId, undefined);
      const quick = await tasks.start({ command: 'true', description: 'Quick', background: false });
      expect((await tasks.result(quick)).exitCode).toBe(0);
      expect(await tasks.moveToBackground(quick, undefined)).toBe(false);
    }, attempts);
    expect(attempts.map((spec) => spec.command)).toEqual(['sleep infinity', 'true']);
  });
});
