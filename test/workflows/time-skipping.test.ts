/**
 * The workflows' long timers, proven on the time-skipping test server in well under a second of
 * wall time each. The command activities here are stand-ins: the subject is the workflows' logic.
 *
 * How the server's clock moves (the Java test server's lock count; see docs/TEMPORAL-NOTES.md): it
 * skips ahead only while no lock is held. It holds one of its own at rest, released while a client
 * awaits a workflow's result or for the span of an `env.sleep` (unlockTimeSkippingWithSleep, which
 * locks again when the span is over); and one for each activity scheduled or running, released when
 * the activity closes (completes, fails, is cancelled or times out). So awaiting a result alone never
 * skips past a pending activity, and an `env.sleep` alone never skips at all: each pending activity
 * needs a release of its own. Every release here ends with a lock again before the lock it stands in
 * for is released, so the count never drops below zero and is back at one when a test ends:
 * - a running stand-in activity calls `env.sleep` itself (the SDK's pattern): it cannot close before
 *   that sleep locks again;
 * - an activity no worker takes is covered by a test's `env.sleep` that ends just before the
 *   activity's timeout, taken from its scheduled event.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { NoticeOutcome } from '../../src/shared/notice.js';
import { outputReaderId } from '../../src/shared/read-position.js';
import {
  noticeSearchAttribute,
  ownerSearchAttribute,
  statusSearchAttribute,
} from '../../src/shared/search-attributes.js';
import { failedState, statusLine } from '../../src/shared/status-line.js';
import { tailText } from '../../src/shared/stream-text.js';
import {
  AttemptFailureType,
  type CommandOutcome,
  type CommandSpec,
  type StopResult,
} from '../../src/shared/task.js';
import { completionNotice } from '../../src/workflows/index.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { heartbeatUntilCancelled, withStandInWorker as withStandIns } from '../helpers/stand-in-worker.js';
import { createTimeSkippingEnv } from '../helpers/temporal-env.js';
import { timed } from '../helpers/timed.js';

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

let env: TestWorkflowEnvironment;
let worker: RunningWorker;

beforeAll(async () => {
  env = await createTimeSkippingEnv();
  worker = await startBashWorker(env);
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

// Each test leaves the clock at rest (its own lock only): a day then passes at once. A lock left
// behind would hold the sleep to wall time; a release left behind would make the server refuse it.
afterEach(async () => {
  const atRest = await Promise.race([env.sleep(DAY_MS).then(() => true), delay(5_000, false)]);
  expect(atRest, 'the test server clock skips a day at rest').toBe(true);
});

const outcome = (signal: string | null, stdout = ''): CommandOutcome => ({
  exitCode: signal === null ? 0 : null,
  signal,
  stdout: { bytes: stdout.length, tailBase64: Buffer.from(stdout).toString('base64') },
  stderr: { bytes: 0, tailBase64: '' },
  host: 'stand-in',
});

/**
 * Stand-in command activities (see test/helpers/stand-in-worker.ts): `runCommand` releases its own
 * hold on the server's clock for `skipMs` (an `env.sleep`), then heartbeats until it is cancelled (a
 * kill, or the timeout of a run that times out by the workflow's timer) and reports SIGTERM. A
 * foreground run's deadline it keeps as a real host does (`deadlineAtMs`, here on the server's
 * clock): it ends the command then and says it timed out. `body` gets the queue, and a promise of
 * the command's start.
 */
function withStandInWorker<T>(
  spec: Partial<CommandSpec>,
  skipMs: number,
  body: (taskQueue: string, commandStarted: Promise<void>) => Promise<T>,
): Promise<T> {
  return withStandIns(
    env,
    {
      spec: { lostAfterMs: HOUR_MS, ...spec },
      async runCommand(command, taskQueue, started) {
        // Like a real worker that is not the task's host: refuse, start nothing.
        if (command.hostQueue !== taskQueue) {
          throw ApplicationFailure.retryable('not the host', AttemptFailureType.wrongHost);
        }
        Context.current().heartbeat();
        started();
        if (command.deadlineAtMs !== undefined) {
          await env.sleep(Math.max(1, command.deadlineAtMs - (await env.currentTimeMs())));
          return { ...outcome('SIGTERM', 'working\n'), timedOut: true };
        }
        await env.sleep(skipMs);
        await heartbeatUntilCancelled();
        return outcome('SIGTERM', 'working\n');
      },
      async stopCommand(): Promise<StopResult> {
        return { kind: 'ended', outcome: outcome('SIGTERM', 'working\n') };
      },
    },
    body,
  );
}

/** Leaves this much wall time between a stand-in release's end and the timeout it covers. */
const RELEASE_MARGIN_MS = 50;

/**
 * Awaits the result of a workflow whose `activityType` activity no worker takes, while the server's
 * clock moves on to that activity's `timeout`. Once the activity is scheduled it holds the clock
 * until its timeout; awaiting the result releases the server's own lock, and an `env.sleep` stands
 * in for the activity's, ending (and locking again) just before the timeout releases it. The last
 * few milliseconds then pass in wall time.
 */
async function resultPastTimeout<T>(
  handle: WorkflowHandle,
  activityType: string,
  timeout: 'scheduleToStartTimeout' | 'scheduleToCloseTimeout',
  /** Only an activity scheduled on this queue (the host queue, not the eager first attempt's). */
  taskQueue?: string,
): Promise<T> {
  const { EventType } = proto.temporal.api.enums.v1;
  let deadlineMs: number | undefined;
  while (deadlineMs === undefined) {
    const { events } = await handle.fetchHistory();
    const scheduled = events?.find(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        event.activityTaskScheduledEventAttributes?.activityType?.name === activityType &&
        (taskQueue === undefined ||
          event.activityTaskScheduledEventAttributes?.taskQueue?.name === taskQueue),
    );
    if (scheduled) {
      deadlineMs =
        tsToMs(scheduled.eventTime) + tsToMs(scheduled.activityTaskScheduledEventAttributes?.[timeout]);
    } else {
      await delay(10);
    }
  }
  const result = handle.result().then(
    (value) => ({ ok: true as const, value: value as T }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await env.sleep(Math.max(1, deadlineMs - (await env.currentTimeMs()) - RELEASE_MARGIN_MS));
  const settled = await result;
  if (!settled.ok) throw settled.error;
  return settled.value;
}

describe('long timers on the time-skipping server', () => {
  it.each([
    { keeper: 'the workflow timer of a run resolved by 0.2.0', spec: {} },
    { keeper: 'the deadline its host keeps', spec: { hostKeepsDeadline: true } },
  ])('times a foreground run out after 2 hours by $keeper', async ({ keeper, spec }) => {
    const { value: result, ms: wallMs } = await withStandInWorker(
      { heartbeatTimeoutMs: 4 * HOUR_MS, ...spec },
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
    console.log(`2-hour timeout by ${keeper}: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
  });

  it('ends a task lost once the lost window passes with no worker on its host', async () => {
    const hostQueue = `nobody-${randomUUID()}`;
    const { value: failure, ms: wallMs } = await withStandInWorker(
      // A host that never polls: the stand-in refuses the eager first attempt, as another host's worker would.
      { hostQueue, hostId: 'gone-host' },
      0,
      (taskQueue) =>
        timed(async () => {
          const tasks = new BashTasks({ client: env.client, taskQueue });
          const taskId = await tasks.start({ command: 'true', description: 'Lost', background: true });
          const handle = env.client.workflow.getHandle(taskId);
          const error = await resultPastTimeout(
            handle,
            'runCommand',
            'scheduleToStartTimeout',
            hostQueue,
          ).catch((err: unknown) => err);
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

  it('drops a completion notice once its window passes with no agent worker, and marks it undelivered', async () => {
    const workflowId = `notice-${randomUUID()}`;
    const { value, ms: wallMs } = await withStandInWorker({}, 0, (taskQueue) =>
      timed(async () => {
        const handle = await env.client.workflow.start(completionNotice, {
          workflowId,
          taskQueue,
          args: [
            {
              sessionId: 's',
              taskQueue: `no-agent-${randomUUID()}`,
              windowMs: HOUR_MS,
              content: 'done',
              ownerAttribute: 'session:s',
            },
          ],
        });
        return resultPastTimeout<NoticeOutcome>(handle, 'injectNotice', 'scheduleToCloseTimeout');
      }),
    );
    expect(value).toBe(NoticeOutcome.expired);
    console.log(`1-hour notice window: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
    // What the session's bash_list finds it by (test/agent/undelivered-notice.test.ts lists it).
    const attributes = (await env.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
    expect(attributes.get(ownerSearchAttribute)).toBe('session:s');
    expect(attributes.get(noticeSearchAttribute)).toBe('undelivered');
  });

  it('ends the output reader of an ended task after its 30 idle minutes', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({ command: 'echo read me', description: 'Read', background: true });
    await tasks.result(taskId);
    expect((await tasks.read(taskId, undefined)).stdout.text).toBe('read me\n');
    const { value: position, ms: wallMs } = await timed(() =>
      env.client.workflow.getHandle(outputReaderId(taskId)).result(),
    );
    expect(position).toEqual({ stdout: 8, stderr: 0 });
    console.log(`30-minute reader idle end: ${wallMs.toFixed(0)}ms of wall time`);
    expect(wallMs).toBeLessThan(10_000);
  });

  it('keeps a small history for a task that runs 30 days of workflow time', async () => {
    const { value, ms: wallMs } = await withStandInWorker(
      { heartbeatTimeoutMs: 60 * DAY_MS },
      30 * DAY_MS,
      (taskQueue, commandStarted) =>
        timed(async () => {
          const tasks = new BashTasks({ client: env.client, taskQueue });
          const taskId = await tasks.start({ command: 'serve', description: '30 days', background: true });
          // A reader of a running task probes it every 6 hours: 120 probes in 30 days.
          await tasks.read(taskId, undefined);
          // The command releases its activity's hold for 30 days; this sleep releases the server's own.
          await commandStarted;
          await env.sleep(30 * DAY_MS);
          await tasks.kill(taskId, undefined);
          const handle = env.client.workflow.getHandle(taskId);
          await handle.result();
          // The reader ends 30 idle minutes after the task, on this worker's queue: with no worker
          // left to run it, its last workflow task would hold the server's clock for good.
          await env.client.workflow.getHandle(outputReaderId(taskId)).result();
          const { historyLength } = await handle.describe();
          // The test server reports no history size: measure the history as the server sends it.
          const history = await handle.fetchHistory();
          const historySize = proto.temporal.api.history.v1.History.encode(history).finish().length;
          return { historyLength, historySize };
        }),
    );
    expect(value.historyLength).toBeLessThan(1_000);
    expect(value.historySize).toBeLessThan(256 * 1024);
    console.log(
      `30 days: ${value.historyLength} events, ${value.historySize} bytes, ${wallMs.toFixed(0)}ms of wall time`,
    );
    expect(wallMs).toBeLessThan(10_000);
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
