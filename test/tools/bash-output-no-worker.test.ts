// `bash_output` while no worker is alive: each test crashes its own worker process (a real
// `durable-bash worker`) with a task running, and reads with only the server to ask.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { AttachedTasks } from '../../src/command-host/attached-tasks.js';
import { outputReaderId } from '../../src/shared/read-position.js';
import { WORKER_UNAVAILABLE } from '../../src/shared/render.js';
import { AttemptFailureType } from '../../src/shared/task.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { scanSupervisors } from '../../src/worker/orphan-scan.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { printedBytes } from '../helpers/printed.js';
import { processesMatching } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { text } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
const workerProcesses: WorkerProcess[] = [];
let restarted: RunningWorker | undefined;
const markers: number[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  await Promise.all(workerProcesses.map((worker) => worker.crash()));
  await restarted?.stop();
  // A command outlives its crashed worker (its supervisor does), and a failed test may leave one.
  for (const marker of markers)
    if (processesMatching(new RegExp(`^sleep ${marker}$`)).length > 0)
      execFileSync('pkill', ['-f', `^sleep ${marker}$`]);
  await env?.teardown();
});

/**
 * A worker process on a queue of its own, and a background task on it that printed `before` (the
 * server holds it) and sleeps; the test crashes the worker when it wants.
 */
async function sleeperOnWorkerProcess(heartbeatTimeoutMs = 30_000) {
  const taskQueue = `test-${randomUUID()}`;
  const marker = 7000 + Math.floor(Math.random() * 2000);
  markers.push(marker);
  // Its own host: a worker started later on this spill directory is the same host, and re-attaches.
  const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-no-worker-'));
  // Heartbeats 12 s apart (a 30 s heartbeat timeout): the server soon holds what it printed, and
  // its attempt stays pending through the reads after the crash.
  const worker = await startWorkerProcess(env, taskQueue, [
    '--spill-dir',
    spillDir,
    '--heartbeat-timeout-ms',
    String(heartbeatTimeoutMs),
  ]);
  workerProcesses.push(worker);
  const tools = createBashTools({ client: env.client, taskQueue });
  const tool = (name: string) => tools.find((candidate) => candidate.name === name) as Tool;
  const started = text(
    await tool('bash').execute({
      command: `echo before; sleep ${marker}`,
      description: 'Sleep',
      run_in_background: true,
    }),
  );
  const taskId = started.replace('started background task ', '');
  const tasks = new BashTasks({ client: env.client, taskQueue });
  // Printed, as a peek on the host sees it; and held by the server after the next heartbeat (what a
  // read shows once the worker is gone).
  await expect.poll(() => printedBytes(tasks, taskId), { timeout: 15_000 }).toBe(7);
  await expect
    .poll(async () => (await tasks.snapshot(taskId, undefined)).stdout.bytes, { timeout: 20_000 })
    .toBe(7);
  return { taskQueue, spillDir, marker, worker, tasks, taskId, bashOutput: tool('bash_output') };
}

/** The reader's workflow tasks and updates, a line each with its time: for a failure's message. */
async function readerEvents(taskId: string): Promise<string> {
  const { events } = await env.client.workflow.getHandle(outputReaderId(taskId)).fetchHistory();
  return (events ?? [])
    .map((event) => {
      const at = new Date(Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6);
      const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      const completed = event.workflowExecutionUpdateCompletedEventAttributes;
      const what = accepted
        ? `update accepted ${accepted.input?.name} ${accepted.meta?.updateId} ${payloadText(accepted.input?.args?.payloads?.[0]?.data)}`
        : completed
          ? `update completed ${completed.meta?.updateId} ${payloadText(completed.outcome?.success?.payloads?.[0]?.data)}`
          : `event type ${event.eventType}`;
      return `${at.toISOString()} #${event.eventId} ${what}`;
    })
    .join('\n');
}

const payloadText = (data: Uint8Array | null | undefined) => (data ? Buffer.from(data).toString('utf8') : '');

describe('bash_output without a worker', () => {
  it('answers within seconds with what the server holds, moves no read position, and and reads on once a worker is back', async () => {
    const { taskQueue, spillDir, marker, worker, tasks, taskId, bashOutput } = await sleeperOnWorkerProcess();

    await worker.crash();

    const began = Date.now();
    const expected =
      'before\n[status: running]\n[task worker unavailable: this is the output the server holds; the read position did not move, so it will be shown again]';
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(expected);
    const tookMs = Date.now() - began;
    expect(tookMs).toBeLessThan(10_000);
    // Nothing was consumed: the same output comes again.
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(expected);

    // A worker is back on the same host and re-attaches to the command: the claims that waited
    // expired unapplied, and the output is read once.
    restarted = await startBashWorker(env, { spillDir }, taskQueue);
    const afterRestart = text(await bashOutput.execute({ task_id: taskId }));
    // This read may come before the retry's heartbeat at attach, after the restarted worker failed
    // the crashed attempt: it then reads what that failure carried (CI of 2026-12-06 read "no new
    // output" there once). On a failure, the reader's history says which update moved what, and when.
    const history = afterRestart === 'before\n[status: running]' ? '' : await readerEvents(taskId);
    expect(afterRestart, history).toBe('before\n[status: running]');
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe('(no new output)\n[status: running]');
    expect(await tasks.kill(taskId, undefined)).toBe('killed');
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(
      '(no new output)\n[status: killed by SIGTERM]',
    );
    expect(processesMatching(new RegExp(`^sleep ${marker}$`))).toEqual([]);
  });

  it('with wait_ms, waits its full time on what the server reports, then answers as a read with no worker', async () => {
    const { worker, taskId, bashOutput } = await sleeperOnWorkerProcess();
    // Read what there is while the worker lives, so nothing is left unread.
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe('before\n[status: running]');

    await worker.crash();
    const begun = Date.now();
    const read = text(await bashOutput.execute({ task_id: taskId, wait_ms: 2_000 }));
    const elapsed = Date.now() - begun;
    expect(read).toBe(`(no new output)\n[status: running]\n${WORKER_UNAVAILABLE}`);
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
  });

  it('still shows what the server holds once the crashed attempt timed out', async () => {
    // A short heartbeat timeout: the attempt the crash left times out while no worker is back, and
    // the next attempt waits, never started, with no heartbeat of its own.
    const { worker, taskId, bashOutput } = await sleeperOnWorkerProcess(3_000);
    await worker.crash();
    await expect
      .poll(
        async () => {
          const { events } = await env.client.workflow.getHandle(taskId).fetchHistory();
          return (events ?? []).some((event) => event.activityTaskTimedOutEventAttributes);
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe(true);
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(
      `before\n[status: running]\n${WORKER_UNAVAILABLE}`,
    );
  });

  it('shows what the server holds once a restarting worker failed the crashed attempt, before the retry attached', async () => {
    const { worker, taskId, tasks, spillDir, bashOutput } = await sleeperOnWorkerProcess();
    const { hostQueue } = await tasks.snapshot(taskId, undefined);
    await worker.crash();
    // What a worker restarting on this host does first, with no worker to go on after it: the
    // attempt the crash left is failed, and its retry has yet to heartbeat.
    const answered = await scanSupervisors({
      spillDir,
      namespace: 'default',
      hostQueue: hostQueue as string,
      client: env.client,
      attached: new AttachedTasks(),
      awaitingRetry: new Map(),
      failStaleAttempts: true,
      heartbeatTimeoutMs: 30_000,
      lostAttemptGraceMs: 3_000,
    });
    expect(answered).toBe(true);
    const { events } = await env.client.workflow.getHandle(taskId).fetchHistory();
    const failure = (events ?? []).find((event) => event.activityTaskFailedEventAttributes)
      ?.activityTaskFailedEventAttributes?.failure;
    expect(failure?.applicationFailureInfo?.type).toBe(AttemptFailureType.workerRestarted);
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(
      `before\n[status: running]\n${WORKER_UNAVAILABLE}`,
    );
  });
});
