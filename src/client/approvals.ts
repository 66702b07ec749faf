/**
 * Durable approval requests (shared/approval.ts has the whole path): each a `bashApproval` workflow
 * on the command queue, owned as a task is, listed from visibility, decided by its `decide` update.
 */
import { randomUUID } from 'node:crypto';
import {
  type Client,
  isGrpcCancelledError,
  isGrpcDeadlineError,
  type WorkflowExecutionInfo,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { type OwnerHasher, ownerHasherOf } from '../codec/owner-hash.js';
import {
  type ApprovalDecision,
  type ApprovalInput,
  type ApprovalOutcome,
  type ApprovalQuestion,
  type ApprovalRequest,
  alreadyDecided,
  approvalClosed,
  isApprovalIdShape,
} from '../shared/approval.js';
import { positiveOption } from '../shared/checks.js';
import { ApprovalError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS, DEFAULT_APPROVAL_EXPIRY_MS } from '../shared/limits.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import type { NoticeTarget } from '../shared/task.js';
import { bashApproval, callerLeftSignal, decideUpdate } from '../workflows/bash-approval.js';
import type { BashTasks } from './bash-tasks.js';
import { ownerToken } from './ownership.js';
import { listExecutions, ownerCondition, quoteQueryValue } from './task-list.js';
import type { StartRequest } from './task-start.js';
import { asClientError } from './temporal-unreachable.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';
import { DeadlinePassed, untilDeadline } from './until-deadline.js';

/**
 * How long a decision waits for a command worker to run the request's check: a worker that just
 * started (after a restart) replays the request first. The server keeps a decision it accepted.
 */
const DECIDE_WAIT_MS = 30_000;

/** A request waiting for a decision, as `durable-bash approvals` lists it. */
export interface PendingApproval {
  approvalId: string;
  command: string;
  workdir?: string;
  /** The session the command would run for. */
  sessionId: string;
  background: boolean;
  reason: string;
  requestedAt: Date;
}

export interface ApprovalsOptions {
  /** The client and command queue requests run on, and how a task's start is prepared. */
  tasks: BashTasks;
  /** A request undecided this long is denied with a notice. @default DEFAULT_APPROVAL_EXPIRY_MS (24 hours) */
  expiryMs?: number;
}

export class Approvals {
  private readonly client: Client;
  private readonly ownerHasher: OwnerHasher | undefined;
  readonly expiryMs: number;

  constructor(private readonly options: ApprovalsOptions) {
    this.client = options.tasks.client;
    this.ownerHasher = ownerHasherOf(this.client);
    this.expiryMs = options.expiryMs ?? DEFAULT_APPROVAL_EXPIRY_MS;
    positiveOption('approvalExpiryMs', this.expiryMs);
  }

  /** Where the notices of `owner`'s requests go; none when this host takes no notices. */
  noticeFor(owner: string | undefined): NoticeTarget | undefined {
    return this.options.tasks.noticeFor(owner).notice;
  }

  /**
   * Makes a request for `run` (its owner is the session), for the reason the policy gave; answers
   * what was asked, with the request's id. A foreground caller says how long it waits
   * (`callerWaitMs`): approved after that, the run starts in the background instead.
   */
  async request(
    run: StartRequest & { owner: string },
    reason: string,
    callerWaitMs?: number,
  ): Promise<ApprovalQuestion> {
    const notice = this.noticeFor(run.owner);
    if (notice === undefined)
      throw new ApprovalError('approval requests need an agent host that takes notices');
    const { tasks } = this.options;
    const approvalId = `approval-${randomUUID()}`;
    const request: ApprovalRequest = {
      command: run.command,
      ...(run.workdir !== undefined ? { workdir: run.workdir } : {}),
      sessionId: run.owner,
      background: run.background,
      reason,
    };
    const token = ownerToken(run.owner);
    const ownerAttribute = this.ownerHasher?.hash(token) ?? token;
    const input: ApprovalInput = {
      approvalId,
      request,
      start: tasks.prepareStart(run),
      ...(run.background ? {} : { backgroundStart: tasks.prepareStart(asBackground(run)) }),
      ...(callerWaitMs !== undefined ? { callerWaitMs } : {}),
      expiryMs: this.expiryMs,
      notice,
      ...('workflowId' in notice ? {} : { ownerAttribute }),
    };
    try {
      await this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        this.client.workflow.start(bashApproval, {
          workflowId: approvalId,
          taskQueue: tasks.taskQueue,
          args: [input],
          typedSearchAttributes: [{ key: ownerSearchAttribute, value: ownerAttribute }],
          // The listing's columns (under encryption, the session id the hashed attribute hides).
          memo: { ...request, requestedAtMs: Date.now() },
          staticSummary: `Approval: ${run.command.split('\n', 1)[0]}`,
          staticDetails: `${reason}\n\n\`\`\`bash\n${run.command}\n\`\`\`\n\nDecide with the \`decide\` signal: {"approved": true, "by": "<you>"}`,
        }),
      );
    } catch (err) {
      throw asClientError(this.client, err);
    }
    return { approvalId, ...request };
  }

  /**
   * The request's outcome, once it has one within `waitMs`; undefined when it has none by then or
   * `signal` aborted the wait.
   */
  async outcome(
    approvalId: string,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<ApprovalOutcome | undefined> {
    let outcome: ApprovalOutcome;
    try {
      outcome = await untilDeadline(Date.now() + waitMs, signal, (stop) =>
        this.client.withAbortSignal(stop, () =>
          this.client.workflow.getHandle<typeof bashApproval>(approvalId).result(),
        ),
      );
    } catch (err) {
      if (err instanceof DeadlinePassed || signal?.aborted) return undefined;
      throw asClientError(this.client, err);
    }
    return refuseUnencrypted(outcome, `approval ${approvalId}`, 'outcome');
  }

  /** Tells the request its foreground caller stopped waiting: an approval then runs in the background. */
  async callerLeft(approvalId: string): Promise<void> {
    await this.client.workflow
      .getHandle(approvalId)
      .signal(callerLeftSignal)
      .catch(() => undefined);
  }

  /**
   * Applies a decision; answers `approved <id>` or `denied <id>`. Refused in one line (an
   * ApprovalError) for an unknown id, one decided already, or one that expired.
   */
  async decide(approvalId: string, decision: ApprovalDecision): Promise<string> {
    if (!isApprovalIdShape(approvalId)) throw new ApprovalError(`no approval request ${approvalId}`);
    const handle = this.client.workflow.getHandle(approvalId);
    let answer: string;
    try {
      answer = await this.client.withDeadline(Date.now() + DECIDE_WAIT_MS, () =>
        handle.executeUpdate(decideUpdate, { args: [decision] }),
      );
    } catch (err) {
      if (isDeadline(err))
        throw new ApprovalError(
          `no command worker took the decision on ${approvalId} within ${DECIDE_WAIT_MS}ms: it applies when one does, unless another decision comes first`,
        );
      if (err instanceof WorkflowUpdateFailedError && err.cause instanceof Error)
        throw new ApprovalError(err.cause.message);
      // Not found, or closed (an update finds no running workflow either way): say which.
      const closed = await this.closedOutcome(approvalId);
      if (closed !== undefined) throw new ApprovalError(closed);
      throw asClientError(this.client, err);
    }
    return refuseUnencrypted(answer, `approval ${approvalId}`, "decision's answer");
  }

  /** The pending requests, the oldest first: all of them, or one session's. */
  async list(owner: string | undefined, limit: number): Promise<PendingApproval[]> {
    const query = `WorkflowType = ${quoteQueryValue(bashApproval.name)} AND ExecutionStatus = 'Running'${
      owner === undefined ? '' : ` AND ${ownerCondition(ownerToken(owner), this.ownerHasher)}`
    }`;
    const executions = await listExecutions(this.client, query, limit);
    return executions.map(pendingApproval).sort((a, b) => a.requestedAt.getTime() - b.requestedAt.getTime());
  }

  /** The one-line refusal for a decision on a closed request; undefined when it is not closed. */
  private async closedOutcome(approvalId: string): Promise<string | undefined> {
    try {
      const handle = this.client.workflow.getHandle<typeof bashApproval>(approvalId);
      const description = await handle.describe();
      if (description.type !== bashApproval.name) return `no approval request ${approvalId}`;
      if (description.status.name === 'RUNNING') return undefined;
      if (description.status.name !== 'COMPLETED') return approvalClosed(approvalId);
      const outcome = refuseUnencrypted(await handle.result(), `approval ${approvalId}`, 'outcome');
      if (outcome.kind === 'expired') return approvalClosed(approvalId);
      return alreadyDecided(approvalId, { approved: outcome.kind === 'approved', by: outcome.by });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return `no approval request ${approvalId}`;
      return undefined;
    }
  }
}

/** A foreground run's request, as the run it becomes when approved after its caller left. */
function asBackground(run: StartRequest): StartRequest {
  // `taskStart` leaves out what a background run has no use for (its timeout, the shown bytes).
  return { ...run, background: true };
}

function pendingApproval(execution: WorkflowExecutionInfo): PendingApproval {
  const memo = (execution.memo ?? {}) as Partial<ApprovalRequest> & { requestedAtMs?: number };
  return {
    approvalId: execution.workflowId,
    command: typeof memo.command === 'string' ? memo.command : '',
    ...(typeof memo.workdir === 'string' ? { workdir: memo.workdir } : {}),
    sessionId: typeof memo.sessionId === 'string' ? memo.sessionId : '',
    background: memo.background === true,
    reason: typeof memo.reason === 'string' ? memo.reason : '',
    requestedAt: new Date(
      typeof memo.requestedAtMs === 'number' ? memo.requestedAtMs : execution.startTime.getTime(),
    ),
  };
}

/** The call ran out of its deadline: the update call's own error, or gRPC's. */
function isDeadline(err: unknown): boolean {
  return (
    err instanceof WorkflowUpdateRPCTimeoutOrCancelledError ||
    isGrpcDeadlineError(err) ||
    isGrpcCancelledError(err)
  );
}
