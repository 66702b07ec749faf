/**
 * The workflows' long timers, proven on the time-skipping test server in well under a second of
 * wall time each. The server holds its clock while an activity is scheduled or running;
 * `env.sleep` (unlockTimeSkippingWithSleep) moves it on, the SDK's pattern for an activity racing
 * a workflow timer. The command activities here are stand-ins: the subject is the workflows' logic.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { tailText } from '../../src/client/stream-text.js';
import { NoticeOutcome } from '../../src/shared/notice.js';
import { outputReaderId } from '../../src/shared/read-position.js';
import { statusSearchAttribute } from '../../src/shared/search-attributes.js';
import { failedState, statusLine } from '../../src/shared/status-line.js';
import type { BashTaskInput, CommandOutcome, CommandSpec, StopResult } from '../../src/shared/task.js';
import { bashTask, completionNotice } from '../../src/workflows/index.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createTimeSkippingEnv } from '../helpers/temporal-env.js';

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

let env: TestWorkflowEnvironment;
let worker: RunningWorker;

beforeAll(async () => {
  env = await createTimeSkippingEnv();
  if (process.env.WITH_BASH) worker = await startBashWorker(env);
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

const outcome = (signal: string | null, stdout = ''): CommandOutcome => ({
  exitCode: signal === null ? 0 : null,
  signal,
  stdout: { bytes: stdout.length, tailBase64: Buffer.from(stdout).toString('base64') },
  stderr: { bytes: 0, tailBase64: '' },
  host: 'stand-in',
});

/**
 * A worker with stand-in command activities on a queue of its own. `runCommand` skips `skipMs` of
 * server time, then heartbeats until it is cancelled (a kill or the timeout) and reports SIGTERM.
 */
async function withStandInWorker<T>(
  spec: Partial<CommandSpec>,
  skipMs: number,
  body: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `skip-${randomUUID()}`;
  const standIn = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    maxHeartbeatThrottleInterval: process.env.THROTTLE ? Number(process.env.THROTTLE) : undefined,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: {
      async resolveCommand(input: BashTaskInput): Promise<CommandSpec> {
        return {
          taskId: input.taskId,
          command: input.command,
          workdir: '/',
          background: input.background,
          taskQueue,
          hostQueue: taskQueue,
          hostId: 'stand-in',
          lostAfterMs: HOUR_MS,
          ...(input.background ? {} : { timeoutMs: input.timeoutMs }),
          ...spec,
        };
      },
      async runCommand(): Promise<CommandOutcome> {
        const context = Context.current();
        context.heartbeat();
        const t0 = performance.now();
        console.log('activity: sleeping', skipMs, await env.currentTimeMs());
        await env.sleep(skipMs);
        console.log('activity: slept', performance.now() - t0);
        for (;;) {
          context.heartbeat();
          const cancelled = await Promise.race([
            context.cancelled.then(
              () => false,
              () => true,
            ),
            context.sleep(50).then(() => false),
          ]);
          if (cancelled) { console.log('activity: cancelled', performance.now() - t0); return outcome('SIGTERM', 'working\n'); }
        }
      },
      async stopCommand(): Promise<StopResult> {
        return { kind: 'ended', outcome: outcome('SIGTERM', 'working\n') };
      },
    },
  });
  return standIn.runUntil(body(taskQueue));
}

/** Runs `body` and returns its result with the wall time it took. */
async function timed<T>(body: () => Promise<T>): Promise<{ value: T; wallMs: number }> {
  const started = performance.now();
  const value = await body();
  return { value, wallMs: performance.now() - started };
}

describe('long timers on the time-skipping server', () => {
  it('fires a 2-hour foreground timeout while the command activity runs', async () => {
    const { value: result, wallMs } = await withStandInWorker(
      { heartbeatTimeoutMs: 4 * HOUR_MS },
      3 * HOUR_MS,
      (taskQueue) =>
        timed(async () => {
          const tasks = new BashTasks({ client: env.client, taskQueue });
          const taskId = await tasks.start({
            command: 'sleep infinity',
            description: 'Two hours',
            background: false,
            timeoutMs: 2 * HOUR_MS,
          });
          return tasks.result(taskId);
        }),
    );
    expect({ timedOutAfterMs: result.timedOutAfterMs, signal: result.signal }).toEqual({
      timedOutAfterMs: 2 * HOUR_MS,
      signal: 'SIGTERM',
    });
    console.log(`2-hour timeout: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
  });

  it('ends a task lost once the lost window passes with no worker on its host', async () => {
    const { value: failure, wallMs } = await withStandInWorker(
      { hostQueue: `nobody-${randomUUID()}`, hostId: 'gone-host' },
      0,
      (taskQueue) =>
        timed(async () => {
          const tasks = new BashTasks({ client: env.client, taskQueue });
          const taskId = await tasks.start({ command: 'true', description: 'Lost', background: true });
          const handle = env.client.workflow.getHandle(taskId);
          await env.sleep(HOUR_MS + 60_000);
          const error = await handle.result().catch((err: unknown) => err);
          const description = await handle.describe();
          return { error, status: description.typedSearchAttributes.get(statusSearchAttribute) };
        }),
    );
    expect(failure.error).toBeInstanceOf(WorkflowFailedError);
    expect(statusLine(failedState((failure.error as WorkflowFailedError).cause))).toBe(
      `[status: lost: no worker on its host gone-host came back within ${HOUR_MS}ms; the exit status is unknown]`,
    );
    expect(failure.status).toBe('lost');
    console.log(`1-hour lost window: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
  });

  it('drops a completion notice once its window passes with no agent worker', async () => {
    const { value, wallMs } = await withStandInWorker({}, 0, (taskQueue) =>
      timed(async () => {
        const handle = await env.client.workflow.start(completionNotice, {
          workflowId: `notice-${randomUUID()}`,
          taskQueue,
          args: [
            { sessionId: 's', taskQueue: `no-agent-${randomUUID()}`, windowMs: HOUR_MS, content: 'done' },
          ],
        });
        const t0 = Date.now();
        await env.sleep(HOUR_MS + 60_000);
        console.log('slept', Date.now() - t0);
        return handle.result();
      }),
    );
    expect(value).toBe(NoticeOutcome.expired);
    console.log(`1-hour notice window: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
  });

  it('ends the output reader of an ended task after its 30 idle minutes', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({ command: 'echo read me', description: 'Read', background: true });
    await tasks.result(taskId);
    expect((await tasks.read(taskId, undefined)).stdout.text).toBe('read me\n');
    const { value: position, wallMs } = await timed(() =>
      env.client.workflow.getHandle(outputReaderId(taskId)).result(),
    );
    expect(position).toEqual({ stdout: 8, stderr: 0 });
    console.log(`30-minute reader idle end: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
  });

  it('keeps a small history for a task that runs 30 days of workflow time', async () => {
    const { value, wallMs } = await withStandInWorker(
      { heartbeatTimeoutMs: 60 * DAY_MS },
      30 * DAY_MS,
      (taskQueue) =>
        timed(async () => {
          const tasks = new BashTasks({ client: env.client, taskQueue });
          const taskId = await tasks.start({ command: 'serve', description: '30 days', background: true });
          // A reader of a running task probes it every 6 hours: 120 probes in 30 days.
          await tasks.read(taskId, undefined);
          await env.sleep(30 * DAY_MS + HOUR_MS);
          await tasks.kill(taskId, undefined);
          const handle = env.client.workflow.getHandle(taskId);
          await handle.result();
          const { historyLength, historySize } = await handle.describe();
          return { historyLength, historySize };
        }),
    );
    expect(value.historyLength).toBeLessThan(1_000);
    expect(value.historySize).toBeLessThan(256 * 1024);
    console.log(
      `30 days: ${value.historyLength} events, ${value.historySize} bytes, ${wallMs.toFixed(0)}ms of wall time`,
    );
  });
});

describe('bashTask on the time-skipping server', () => {
  it('runs a real command to its result and records the end status', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({ command: 'echo skipped', description: 'Echo', background: false });
    const result = await tasks.result(taskId);
    expect(tailText(result.stdout)).toBe('skipped\n');
    const description = await env.client.workflow.getHandle(taskId).describe();
    expect(description.typedSearchAttributes.get(statusSearchAttribute)).toBe('completed');
  });
});
