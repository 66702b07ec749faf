/**
 * The approval request's own logic on the time-skipping server, with a stand-in `startApprovedRun`
 * (the activity that counts an approved run against its session's background quota and starts it)
 * and a stand-in inject on the agent queue: which run it asks to start, with which quota, and what
 * an answer over the quota makes of the request.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import type { InjectNoticeRequest } from '../../src/activities/inject-notice.js';
import { taskStart } from '../../src/client/task-start.js';
import type { ApprovalInput, ApprovedRunRequest, ApprovedRunStart } from '../../src/shared/approval.js';
import { NoticeOutcome } from '../../src/shared/notice.js';
import type { TaskId } from '../../src/shared/task.js';
import { bashApproval, callerLeftSignal, decideUpdate } from '../../src/workflows/bash-approval.js';
import { useTimeSkippingServer } from '../helpers/temporal-env.js';

const server = useTimeSkippingServer();

/**
 * Runs `body` with a worker of the approval workflow whose `startApprovedRun` answers `answer` (and
 * records what it was asked), and an agent queue whose inject records each notice.
 */
async function withApprovalWorker(
  answer: ApprovedRunStart,
  body: (queues: { taskQueue: string; agentQueue: string }) => Promise<void>,
): Promise<{ asked: ApprovedRunRequest[]; injected: InjectNoticeRequest[] }> {
  const { env } = server;
  const taskQueue = `approval-${randomUUID()}`;
  const agentQueue = `agent-${randomUUID()}`;
  const asked: ApprovedRunRequest[] = [];
  const injected: InjectNoticeRequest[] = [];
  const workers = await Promise.all([
    Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities: {
        async startApprovedRun(request: ApprovedRunRequest): Promise<ApprovedRunStart> {
          asked.push(request);
          return answer;
        },
      },
    }),
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: agentQueue,
      activities: {
        async injectNotice(request: InjectNoticeRequest) {
          injected.push(request);
          return NoticeOutcome.delivered;
        },
      },
    }),
  ]);
  const done = body({ taskQueue, agentQueue });
  await Promise.all(workers.map((worker) => worker.runUntil(done)));
  return { asked, injected };
}

/** A request for `command` in `session`, as `Approvals.request` makes it (foreground when `callerWaitMs` is given). */
function approvalInput(
  command: string,
  queues: { taskQueue: string; agentQueue: string },
  options: { callerWaitMs?: number; timeoutMs?: number } = {},
): ApprovalInput {
  const sessionId = 'session-a';
  const notice = { sessionId, taskQueue: queues.agentQueue, windowMs: 60_000 };
  const background = options.callerWaitMs === undefined;
  const request = {
    command,
    description: 'Asks',
    background,
    owner: sessionId,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  };
  const prepare = (run: typeof request & { keepTimeout?: boolean }) =>
    taskStart({ ownerHasher: undefined }, run, `bash-${randomUUID()}` as TaskId, { notice });
  return {
    approvalId: `approval-${randomUUID()}`,
    request: { command, sessionId, background, reason: 'asks' },
    start: prepare(request),
    ...(background ? {} : { backgroundStart: prepare({ ...request, background: true, keepTimeout: true }) }),
    ...(options.callerWaitMs !== undefined ? { callerWaitMs: options.callerWaitMs } : {}),
    maxBackgroundTasks: 3,
    expiryMs: 60 * 60_000,
    notice,
  };
}

describe('bashApproval', () => {
  it('an approved run over its session quota does not start: the approval stands and the session hears why', async () => {
    let input: ApprovalInput | undefined;
    const { asked, injected } = await withApprovalWorker(
      { kind: 'overQuota', running: 3, limit: 3 },
      async (queues) => {
        input = approvalInput('echo over', queues);
        const handle = await server.env.client.workflow.start(bashApproval, {
          workflowId: input.approvalId,
          taskQueue: queues.taskQueue,
          args: [input],
        });
        const decision = { approvalId: input.approvalId, approved: true, by: 'alice' };
        expect(await handle.executeUpdate(decideUpdate, { args: [decision] })).toBe(
          `approved ${input.approvalId}`,
        );
        expect(await handle.result()).toEqual({ kind: 'refused', by: 'alice', running: 3, limit: 3 });
        const { memo } = await handle.describe();
        expect(memo?.decision).toEqual({ approved: true, by: 'alice' });
      },
    );
    const approvalId = input?.approvalId;
    expect(asked).toEqual([{ start: input?.start, sessionId: 'session-a', maxBackgroundTasks: 3 }]);
    expect(injected).toEqual([
      {
        sessionId: 'session-a',
        content: `approval ${approvalId} granted by alice, but \`echo over\` did not start: too many background tasks: this session already runs 3 (the limit is 3); wait for one to end or kill one with bash_kill`,
      },
    ]);
  });

  it('a foreground request approved after its caller left starts the background run that keeps its timeout', async () => {
    let input: ApprovalInput | undefined;
    const { asked, injected } = await withApprovalWorker({ kind: 'started' }, async (queues) => {
      input = approvalInput('echo late', queues, { callerWaitMs: 5_000, timeoutMs: 2_000 });
      const handle = await server.env.client.workflow.start(bashApproval, {
        workflowId: input.approvalId,
        taskQueue: queues.taskQueue,
        args: [input],
      });
      await handle.signal(callerLeftSignal);
      await handle.executeUpdate(decideUpdate, {
        args: [{ approvalId: input.approvalId, approved: true, by: 'alice' }],
      });
      expect(await handle.result()).toEqual({
        kind: 'approved',
        by: 'alice',
        taskId: input.backgroundStart?.input.taskId,
        background: true,
      });
    });
    expect(asked).toEqual([{ start: input?.backgroundStart, sessionId: 'session-a', maxBackgroundTasks: 3 }]);
    expect(asked[0]?.start.input).toMatchObject({ background: true, timeoutMs: 2_000, keepTimeout: true });
    expect(injected.map((notice) => notice.content)).toEqual([
      `approval ${input?.approvalId} granted by alice: \`echo late\` started as background task ${input?.backgroundStart?.input.taskId}. Read its output with bash_output.`,
    ]);
  });
});
