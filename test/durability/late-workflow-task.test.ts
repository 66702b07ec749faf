/**
 * A worker that took a workflow task and whose answer reaches the server only after the caller
 * stopped waiting (its host cut off right after it took the task; here a link the test holds, see
 * helpers/held-link.ts). An update that task took before its expiry applies when the answer comes,
 * so the caller must not have said it did not apply: a `bash_output` read lost its bytes that way
 * (found by the chaos suite, seed 251176671), and a `bash_input` said "nothing was written" of a
 * write that landed. Real worker, real server, real processes.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputReaderId } from '../../src/shared/read-position.js';
import type { ToolResult } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { type HeldLink, startHeldLink } from '../helpers/held-link.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';

/** How long the worker's answers are held: past the read's 4 s wait, well inside the 10 s task timeout. */
const HOLD_MS = 6_000;

/** The same for a stdin write, which waits 7 s for the workflow to take it. */
const STDIN_HOLD_MS = 8_500;

/** When a foreground run moves to the background; and how long after that the worker's answers are held. */
const MOVE_AFTER_MS = 3_000;
const MOVE_HOLD_MS = 6_000;

let env: TestWorkflowEnvironment;
let link: HeldLink;
let connection: NativeConnection;
let worker: RunningWorker;

beforeAll(async () => {
  env = await createDevServerEnv();
  link = await startHeldLink(env.address);
  connection = await NativeConnection.connect({ address: link.address });
  worker = await startBashWorker(env, {}, `late-task-${randomUUID()}`, connection);
});

afterAll(async () => {
  link?.release();
  await worker?.stop();
  await connection?.close();
  await link?.close();
  await env?.teardown();
});

/**
 * Resolves once no workflow task of the workflow is pending (scheduled or started), and the worker
 * has had time to poll again: a poll sent while the link holds would not reach the server, and
 * then no worker would take the task the test is about before its expiry.
 */
async function quiet(workflowId: string): Promise<void> {
  await expect
    .poll(async () => (await env.client.workflow.getHandle(workflowId).describe()).raw.pendingWorkflowTask, {
      timeout: 10_000,
    })
    .toBeFalsy();
  await sleep(POLLED_AGAIN_MS);
}

/** Time for a worker that just completed a task to poll again. */
const POLLED_AGAIN_MS = 500;

/** Whether a command of the worker printed `text` (its spill files hold every byte). */
function printed(text: string): boolean {
  const dir = worker.spillDir ?? '';
  return readdirSync(dir, { recursive: true, withFileTypes: true }).some(
    (entry) =>
      entry.isFile() && readFileSync(path.join(entry.parentPath, entry.name), 'latin1').includes(text),
  );
}

describe('a workflow task whose answer reaches the server after its caller stopped waiting', () => {
  it('bash_output: a claim the reader took before its expiry is the read’s, not shown as unclaimed and then lost', async () => {
    const tools = toolsByName(createBashTools({ client: env.client, taskQueue: worker.taskQueue }));
    const session = agent(`late-${randomUUID().slice(0, 8)}`);
    const taskId = await startBackground(tools.bash, 'echo one; sleep 1; echo two', session);
    await expect
      .poll(async () => text(await tools.bash_output.execute({ task_id: taskId }, session)), {
        timeout: 10_000,
      })
      .toBe('one\n[status: running]');
    await env.client.workflow.getHandle(taskId).result();
    const readerId = outputReaderId(taskId);
    await quiet(readerId); // The task's end has reached its reader.

    link.hold();
    const heldAt = Date.now();
    const released = sleep(HOLD_MS).then(() => link.release());
    const answer = text(await tools.bash_output.execute({ task_id: taskId }, session));
    const answeredAt = Date.now();
    await released;
    expect(answer).toBe('two\n[status: completed, exit code: 0]');
    expect(text(await tools.bash_output.execute({ task_id: taskId }, session))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );

    // The case happened: the answer that applied the claim came only when the link let it through.
    expect(answeredAt - heldAt).toBeGreaterThanOrEqual(HOLD_MS);
  });

  it('bash_input: a write the task took before its expiry is answered with what the host did, not "nothing was written"', async () => {
    const tools = toolsByName(createBashTools({ client: env.client, taskQueue: worker.taskQueue }));
    const session = agent(`late-${randomUUID().slice(0, 8)}`);
    const taskId = await startBackground(
      tools.bash,
      'while read -r line; do echo "got $line"; done',
      session,
      { keep_stdin_open: true },
    );
    await expect
      .poll(async () => text(await tools.bash_output.execute({ task_id: taskId }, session)), {
        timeout: 10_000,
      })
      .toBe('(no new output)\n[status: running]');
    await quiet(taskId);

    link.hold();
    const heldAt = Date.now();
    // Past the write's own wait (7 s), well inside the 10 s workflow task timeout.
    const released = sleep(STDIN_HOLD_MS).then(() => link.release());
    const answer = text(await tools.bash_input.execute({ task_id: taskId, text: 'x\n' }, session));
    const answeredAt = Date.now();
    await released;
    expect(answer).toBe(`wrote 2 bytes to the stdin of task ${taskId}`);
    expect(answeredAt - heldAt).toBeGreaterThanOrEqual(STDIN_HOLD_MS);
    await expect
      .poll(async () => text(await tools.bash_output.execute({ task_id: taskId }, session)), {
        timeout: 10_000,
      })
      .toBe('got x\n[status: running]');
    await tools.bash_kill.execute({ task_id: taskId }, session);
  });

  it('bash: a move to the background the run took before its expiry is a move, not a run waited for to its end', async () => {
    const marker = `started-${randomUUID().slice(0, 8)}`;
    const [bash, bashKill] = createBashTools({
      client: env.client,
      taskQueue: worker.taskQueue,
      autoBackgroundAfterMs: MOVE_AFTER_MS,
    }).filter((tool) => tool.name === 'bash' || tool.name === 'bash_kill');
    const session = agent(`late-${randomUUID().slice(0, 8)}`);
    const call = bash?.execute(
      { command: `echo ${marker}; sleep 30; echo done`, description: 'Sleeps' },
      session,
    );
    // The command runs: its output is in the worker's spill directory.
    await expect.poll(() => printed(marker), { timeout: 10_000 }).toBe(true);
    await sleep(POLLED_AGAIN_MS);
    const heldAt = Date.now();
    link.hold();
    // Past the move's own wait (5 s from the move), well inside the 10 s workflow task timeout.
    const released = sleep(MOVE_AFTER_MS + MOVE_HOLD_MS).then(() => link.release());
    const answer = text(await (call as Promise<ToolResult>));
    const answeredAt = Date.now();
    await released;
    const match = new RegExp(
      `^${marker}\\n\\[still running after (\\d+)ms; moved to background task (bash-[0-9a-f-]{36})\\. Read its output with bash_output\\.\\]$`,
    ).exec(answer);
    expect(match?.[1], answer).toBe(String(MOVE_AFTER_MS));
    // The move was held with the rest, and its answer is not the run's end.
    expect(answeredAt - heldAt).toBeGreaterThanOrEqual(MOVE_AFTER_MS + MOVE_HOLD_MS);
    expect(answeredAt - heldAt).toBeLessThan(25_000);
    await bashKill?.execute({ task_id: match?.[2] }, session);
  }, 60_000);
});
