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
  decideShape,
  isApprovalIdShape,
  tooManyPendingApprovals,
} from '../shared/approval.js';
import { positiveIntegerOption, positiveOption } from '../shared/checks.js';
import { ApprovalError } from '../shared/errors.js';
import {
  CONNECT_TIMEOUT_MS,
  DEFAULT_APPROVAL_EXPIRY_MS,
  MAX_PENDING_APPROVALS_PER_SESSION,
} from '../shared/limits.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { markdownCodeBlock, markdownLine } from '../shared/shown-markdown.js';
import type { BashTaskInput, NoticeTarget } from '../shared/task.js';
import { bashApproval, callerLeftSignal, decideUpdate } from '../workflows/bash-approval.js';
import type { BashTasks } from './bash-tasks.js';
import { decodePayload } from './decode-payload.js';
import { ownerToken } from './ownership.js';
import { SessionCap } from './session-cap.js';
import { listExecutions, ownerCondition, quoteQueryValue } from './task-list.js';
import type { StartRequest } from './task-start.js';
import { asClientError } from './temporal-unreachable.js';
import { refuseUnencrypted, refuseUnencryptedMemo } from './unencrypted-payloads.js';
import { DeadlinePassed, untilDeadline } from './until-deadline.js';

/**
 * How long a decision waits for a command worker to run the request's check: a worker that just
 * started (after a restart) replays the request first. The server keeps a decision it accepted.
 */
const DECIDE_WAIT_MS = 30_000;

/**
 * Longest command a request's summary shows (the Web UI's one-line title in lists), cut with `…`:
 * its details, on the same page, show the whole command.
 */
const SUMMARY_COMMAND_CHARS = 100;

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

/** Where a request stands: waiting, or how it ended (a request ended otherwise: its workflow's status). */
export type ApprovalState = { kind: 'waiting' } | ApprovalOutcome | { kind: 'closed'; status: string };

/**
 * One request as `durable-bash approvals show` prints it: what runs once it is approved (the run
 * its workflow holds), for whom, why the policy asked, and where it stands.
 */
export interface ApprovalDescription {
  approvalId: string;
  /** The session the command would run for. */
  sessionId: string;
  /** Why the policy asked. */
  reason: string;
  requestedAt: Date;
  /** When an undecided request is denied. */
  expiresAt: Date;
  /** The run an approval starts: its command, workdir, background or not, timeout. */
  run: BashTaskInput;
  /** A foreground request's: how long its caller waits for the decision. */
  callerWaitMs?: number;
  /** A foreground request's: the run an approval starts once its caller stopped waiting. */
  lateRun?: BashTaskInput;
  state: ApprovalState;
}

export interface ApprovalsOptions {
  /** The client and command queue requests run on, and how a task's start is prepared. */
  tasks: BashTasks;
  /** A request undecided this long is denied with a notice. @default DEFAULT_APPROVAL_EXPIRY_MS (24 hours) */
  expiryMs?: number;
  /**
   * Requests a session may have waiting for a decision; past it, a request is refused in one line.
   * `Infinity`: no cap, and no count. @default MAX_PENDING_APPROVALS_PER_SESSION (20)
   */
  maxPendingPerSession?: number;
  /**
   * This agent host's background quota (`maxBackgroundTasksPerSession`), which each request carries:
   * an approved run that starts in the background is counted against it then. @default no cap
   */
  maxBackgroundTasksPerSession?: number;
}

export class Approvals {
  private readonly client: Client;
  private readonly ownerHasher: OwnerHasher | undefined;
  readonly expiryMs: number;
  /** Requests a session may have waiting for a decision (`Infinity`: no cap). */
  private readonly maxPending: number;
  /** Counts each session's undecided requests before it makes another. */
  private readonly pending: SessionCap;

  constructor(private readonly options: ApprovalsOptions) {
    this.client = options.tasks.client;
    this.ownerHasher = ownerHasherOf(this.client);
    this.expiryMs = options.expiryMs ?? DEFAULT_APPROVAL_EXPIRY_MS;
    positiveOption('approvalExpiryMs', this.expiryMs);
    this.maxPending = options.maxPendingPerSession ?? MAX_PENDING_APPROVALS_PER_SESSION;
    if (this.maxPending !== Number.POSITIVE_INFINITY)
      positiveIntegerOption('maxPendingApprovalsPerSession', this.maxPending);
    this.pending = new SessionCap({
      listed: async (owner, atLeast) => {
        const executions = await listExecutions(
          this.client,
          this.pendingQuery(owner),
          atLeast + DECIDED_SLACK,
        );
        return executions
          .filter((execution) => !isDecided(execution.memo))
          .map((execution) => execution.workflowId);
      },
      counts: (approvalId) => this.isPending(approvalId),
    });
  }

  /** Where the notices of `owner`'s requests go; none when this host takes no notices. */
  noticeFor(owner: string | undefined): NoticeTarget | undefined {
    return this.options.tasks.noticeFor(owner).notice;
  }

  /**
   * Makes a request for `run` (its owner is the session), for the reason the policy gave; answers
   * what was asked, with the request's id. A foreground caller says how long it waits
   * (`callerWaitMs`): approved after that, the run starts in the background instead, within the
   * call's timeout. Refused in one line (an ApprovalError) when the session takes no notices, or
   * already has `maxPendingPerSession` requests waiting for a decision.
   */
  async request(
    run: StartRequest & { owner: string },
    reason: string,
    callerWaitMs?: number,
  ): Promise<ApprovalQuestion> {
    const notice = this.noticeFor(run.owner);
    if (notice === undefined)
      throw new ApprovalError('approval requests need an agent host that takes notices');
    const limit = this.maxPending;
    const start = () => this.start(run, reason, notice, callerWaitMs);
    if (limit === Number.POSITIVE_INFINITY) return start();
    const made = await this.pending.startWithin(run.owner, limit, start, (question) => question.approvalId);
    if ('atLimit' in made) throw new ApprovalError(tooManyPendingApprovals(made.atLimit, limit));
    return made.started;
  }

  /** Starts the request's workflow. */
  private async start(
    run: StartRequest & { owner: string },
    reason: string,
    notice: NoticeTarget,
    callerWaitMs: number | undefined,
  ): Promise<ApprovalQuestion> {
    const { tasks } = this.options;
    const { maxBackgroundTasksPerSession } = this.options;
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
      ...(maxBackgroundTasksPerSession !== undefined &&
      maxBackgroundTasksPerSession !== Number.POSITIVE_INFINITY
        ? { maxBackgroundTasks: maxBackgroundTasksPerSession }
        : {}),
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
          staticSummary: `Approval: ${markdownLine(run.command, SUMMARY_COMMAND_CHARS)}`,
          staticDetails: approvalDetails(approvalId, request),
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
        // The decision names its request: a copy sent to another request is refused there.
        handle.executeUpdate(decideUpdate, { args: [{ ...decision, approvalId }] }),
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

  /** The visibility query for the running requests of `owner`. */
  private pendingQuery(owner: string): string {
    return `WorkflowType = ${quoteQueryValue(bashApproval.name)} AND ExecutionStatus = 'Running' AND ${ownerCondition(ownerToken(owner), this.ownerHasher)}`;
  }

  /** Whether a request still waits for a decision, asked of the server; one that cannot be described counts. */
  private async isPending(approvalId: string): Promise<boolean> {
    try {
      const description = await this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        this.client.workflow.getHandle(approvalId).describe(),
      );
      return description.status.name === 'RUNNING' && !isDecided(description.memo);
    } catch (err) {
      return !(err instanceof WorkflowNotFoundError);
    }
  }

  /**
   * One request, read from its workflow: the run it starts as its start input holds it (what runs,
   * whatever its memo says), and where it stands. An ApprovalError for an id that names none.
   */
  async describe(approvalId: string): Promise<ApprovalDescription> {
    const unknown = new ApprovalError(`no approval request ${approvalId}`);
    if (!isApprovalIdShape(approvalId)) throw unknown;
    const handle = this.client.workflow.getHandle<typeof bashApproval>(approvalId);
    try {
      const description = await handle.describe();
      if (description.type !== bashApproval.name) throw unknown;
      const [started] = (await handle.fetchHistory()).events ?? [];
      const [payload] = started?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      if (payload === undefined) throw unknown;
      // What a client without the keys wrote is never shown as a request (unencrypted-payloads.ts).
      refuseUnencryptedMemo(description.memo, `approval ${approvalId}`);
      const input = refuseUnencrypted(
        await decodePayload<ApprovalInput>(this.client, payload),
        `approval ${approvalId}`,
        'start input',
      );
      const memo = (description.memo ?? {}) as { requestedAtMs?: number; outcome?: ApprovalOutcome };
      const requestedAt = new Date(memo.requestedAtMs ?? description.startTime.getTime());
      return {
        approvalId,
        sessionId: input.request.sessionId,
        reason: input.request.reason,
        requestedAt,
        expiresAt: new Date(requestedAt.getTime() + input.expiryMs),
        run: input.start.input,
        ...(input.callerWaitMs !== undefined ? { callerWaitMs: input.callerWaitMs } : {}),
        ...(input.backgroundStart !== undefined ? { lateRun: input.backgroundStart.input } : {}),
        state:
          description.status.name === 'RUNNING'
            ? { kind: 'waiting' }
            : (memo.outcome ?? { kind: 'closed', status: description.status.name.toLowerCase() }),
      };
    } catch (err) {
      if (err === unknown || err instanceof WorkflowNotFoundError) throw unknown;
      throw asClientError(this.client, err);
    }
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
      // A run the quota refused was approved all the same.
      return alreadyDecided(approvalId, { approved: outcome.kind !== 'denied', by: outcome.by });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return `no approval request ${approvalId}`;
      return undefined;
    }
  }
}

/**
 * Listed beyond the cap, for the session's requests that are decided but still running (telling the
 * session, or starting the run): they wait for no one, so they are not counted.
 */
const DECIDED_SLACK = 20;

/** Whether a request's memo holds its decision (the workflow writes it as the decision applies). */
function isDecided(memo: Record<string, unknown> | undefined): boolean {
  return memo?.decision !== undefined;
}

/**
 * A request's details in the Web UI (markdown): why the policy asked, for whom, where, and the
 * command whole, each in the shown form, then how to decide.
 */
function approvalDetails(approvalId: string, request: ApprovalRequest): string {
  return [
    [
      `- Reason: ${markdownLine(request.reason)}`,
      `- Session: ${markdownLine(request.sessionId)}`,
      `- Workdir: ${request.workdir !== undefined ? markdownLine(request.workdir) : "the worker's default"}`,
      `- Runs: in the ${request.background ? 'background' : 'foreground'}`,
    ].join('\n'),
    markdownCodeBlock(request.command, 'bash'),
    `Decide with the \`decide\` signal: \`${decideShape(approvalId)}\` (or \`"approved": false\`)`,
  ].join('\n\n');
}

/**
 * A foreground run's request, as the run it becomes when approved after its caller left: in the
 * background, within the call's timeout still (`keepTimeout`), so an approval never lets a command
 * run longer than the call that asked for it.
 */
function asBackground(run: StartRequest): StartRequest {
  // `taskStart` leaves out what a background run has no use for (the shown bytes).
  return { ...run, background: true, keepTimeout: true };
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
