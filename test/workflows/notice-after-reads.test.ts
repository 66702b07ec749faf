/**
 * The completion notice of a task that reads have seen, sent by its output reader: the order
 * between a read on the host and the task's end is what decides what the notice carries, so the
 * host read here is a stand-in the test releases.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { InjectNoticeRequest } from '../../src/activities/inject-notice.js';
import {
  type HostRead,
  type HostReadClaim,
  type HostReadRequest,
  outputReaderId,
  START_OF_OUTPUT,
} from '../../src/shared/read-position.js';
import type { StreamTail } from '../../src/shared/task.js';
import { controlTaskQueue } from '../../src/shared/task-queues.js';
import { bashOutputReader, readUpdate } from '../../src/workflows/output-reader.js';
import { type ReaderNotice, taskEndedSignal } from '../../src/workflows/reader-signals.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  await env?.teardown();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const stream = (text: string): StreamTail => ({ bytes: Buffer.byteLength(text), tail: text });

/** What a host read of `text` from byte `from` returns. */
function hostRead(text: string, from: number): HostRead {
  return {
    upTo: { stdout: Buffer.byteLength(text), stderr: 0 },
    stdout: { text: Buffer.from(text).subarray(from).toString(), droppedBytes: 0 },
    stderr: { text: '', droppedBytes: 0 },
    host: 'stand-in',
    ended: true,
  };
}

/**
 * A task's reader on a fresh queue, whose host reads wait for the test's `release`, and an agent
 * queue whose inject records each notice.
 */
async function withReader(
  body: (reader: {
    taskId: string;
    hostQueue: string;
    agentQueue: string;
    readsStarted: HostReadRequest[];
    release: (read: HostRead) => void;
    injected: InjectNoticeRequest[];
  }) => Promise<void>,
): Promise<void> {
  const taskQueue = `reader-${randomUUID()}`;
  const hostQueue = `host-${randomUUID()}`;
  const agentQueue = `agent-${randomUUID()}`;
  const taskId = `bash-${randomUUID()}`;
  const readsStarted: HostReadRequest[] = [];
  const pending: ((read: HostRead) => void)[] = [];
  const injected: InjectNoticeRequest[] = [];
  const workers = await Promise.all([
    Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    }),
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: controlTaskQueue(hostQueue),
      activities: {
        readOutput: (request: HostReadRequest) =>
          new Promise<HostRead>((resolve) => {
            readsStarted.push(request);
            pending.push(resolve);
          }),
      },
    }),
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: agentQueue,
      activities: {
        async injectNotice(request: InjectNoticeRequest) {
          injected.push(request);
          return 'delivered';
        },
      },
    }),
  ]);
  // No task of this id runs: the reader's probe finds it ended, as a reader of a closed task does.
  await env.client.workflow.start(bashOutputReader, {
    workflowId: outputReaderId(taskId),
    taskQueue,
    args: [{ taskId, position: START_OF_OUTPUT, taskEnded: false, claimsPerRun: 100, idleMs: 60_000 }],
  });
  const done = body({
    taskId,
    hostQueue,
    agentQueue,
    readsStarted,
    release: (read) => pending.shift()?.(read),
    injected,
  });
  await Promise.all(workers.map((worker) => worker.runUntil(done)));
}

/** A `bash_output` read on the host, as the client sends it. */
function read(taskId: string, hostQueue: string) {
  const claim: HostReadClaim = {
    claimId: randomUUID(),
    hostQueue,
    waitMs: 10_000,
    wholeLines: false,
    answerByMs: Date.now() + 30_000,
  };
  return env.client.workflow
    .getHandle(outputReaderId(taskId))
    .executeUpdate(readUpdate, { updateId: claim.claimId, args: [claim] });
}

/** The notice a task that ended with `stdout` hands its reader. */
function endNotice(agentQueue: string, stdout: string): ReaderNotice {
  return {
    target: { sessionId: 'session-a', taskQueue: agentQueue, windowMs: 60_000 },
    statusLine: '[status: completed, exit code: 0]',
    stdout: stream(stdout),
    stderr: stream(''),
    ownerAttribute: 'session:session-a',
  };
}

async function noticeOutcome(taskId: string): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await env.client.workflow.getHandle(`${taskId}-notice`).result();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) || attempt >= 200) throw err;
      await sleep(50);
    }
  }
}

const first = (taskId: string) =>
  `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.`;

describe("a task's reader and its completion notice", () => {
  it('sends the notice after a read in flight when the task ended, without the lines it returned', async () => {
    await withReader(async ({ taskId, hostQueue, agentQueue, readsStarted, release, injected }) => {
      const output = 'n1\nn2\nn3\n';
      const reading = read(taskId, hostQueue);
      await expectSoon(() => readsStarted.length === 1);
      await env.client.workflow
        .getHandle(outputReaderId(taskId))
        .signal(taskEndedSignal, endNotice(agentQueue, output));
      // The notice waits for the read's turn to end.
      await sleep(1_000);
      await expect(env.client.workflow.getHandle(`${taskId}-notice`).describe()).rejects.toBeInstanceOf(
        WorkflowNotFoundError,
      );
      release(hostRead(output, 0));
      const answer = await reading;
      expect(answer.kind === 'read' && answer.read.stdout.text).toBe(output);

      expect(await noticeOutcome(taskId)).toBe('delivered');
      expect(injected).toEqual([
        { sessionId: 'session-a', content: `${first(taskId)}\n[output: all of it was already read]` },
      ]);
      // Its parent is the reader, and it closed quietly as any notice does.
      const notice = await env.client.workflow.getHandle(`${taskId}-notice`).describe();
      expect(notice.raw.workflowExecutionInfo?.parentExecution?.workflowId).toBe(outputReaderId(taskId));
    });
  });

  it('carries what no read had taken when the end came, and a later read still returns it', async () => {
    await withReader(async ({ taskId, hostQueue, agentQueue, readsStarted, release, injected }) => {
      const reading = read(taskId, hostQueue);
      await expectSoon(() => readsStarted.length === 1);
      release({ ...hostRead('n1\n', 0), ended: false });
      await reading;
      await env.client.workflow
        .getHandle(outputReaderId(taskId))
        .signal(taskEndedSignal, endNotice(agentQueue, 'n1\nn2\n'));

      expect(await noticeOutcome(taskId)).toBe('delivered');
      expect(injected).toEqual([
        { sessionId: 'session-a', content: `${first(taskId)}\n[output since the last read]\nn2` },
      ]);
      // The notice moved no read position.
      const later = read(taskId, hostQueue);
      await expectSoon(() => readsStarted.length === 2);
      expect(readsStarted[1]?.from).toEqual({ stdout: 3, stderr: 0 });
      release(hostRead('n1\nn2\n', 3));
      const answer = await later;
      expect(answer.kind === 'read' && answer.before).toEqual({ stdout: 3, stderr: 0 });
    });
  });
});

describe("a task's reader and an agent workflow's notice", () => {
  it('signals the agent workflow the notice without what reads showed', async () => {
    await withReader(async ({ taskId, hostQueue, readsStarted, release }) => {
      // An agent workflow no worker runs: its history shows the signal it got.
      const inbox = await env.client.workflow.start('noticeInbox', {
        taskQueue: `no-worker-${randomUUID()}`,
        workflowId: `inbox-${randomUUID()}`,
      });
      const reading = read(taskId, hostQueue);
      await expectSoon(() => readsStarted.length === 1);
      release({ ...hostRead('built\n', 0), ended: false });
      await reading;
      const notice: ReaderNotice = {
        target: { workflowId: inbox.workflowId },
        statusLine: '[status: completed, exit code: 1]',
        stdout: stream('built\n'),
        stderr: stream('error: tests failed\n'),
      };
      await env.client.workflow.getHandle(outputReaderId(taskId)).signal(taskEndedSignal, notice);

      const text = `background bash task ${taskId} finished [status: completed, exit code: 1]. Read its output with bash_output.\n[output since the last read]\n[stderr]\nerror: tests failed`;
      await expectSoon(async () => (await signalsTo(inbox.workflowId)).length === 1);
      expect(await signalsTo(inbox.workflowId)).toEqual([
        { taskId, agentWorkflowId: inbox.workflowId, text },
      ]);
      await inbox.terminate();
    });
  });
});

/** The `durableBashNotice` signals in a workflow's history, decoded. */
async function signalsTo(workflowId: string): Promise<unknown[]> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((event) => event.workflowExecutionSignaledEventAttributes)
    .filter((signaled) => signaled?.signalName === 'durableBashNotice')
    .map((signaled) => JSON.parse(Buffer.from(signaled?.input?.payloads?.[0]?.data ?? []).toString()));
}

/** Waits up to 5 s for `condition` to hold, then asserts it. */
async function expectSoon(condition: () => boolean | Promise<boolean>): Promise<void> {
  let held = await condition();
  for (let attempt = 0; attempt < 200 && !held; attempt += 1) {
    await sleep(25);
    held = await condition();
  }
  expect(held).toBe(true);
}
