/**
 * Durable approvals: a `bash` call the permission policy asked about, waiting for a person (or an
 * MCP client's user) in a `bashApproval` workflow that outlives the agent host. Its whole path
 * (docs/PERMISSIONS.md#durable-approvals says it in prose):
 * - policy/permission-gate.ts: an `ask` with no `approve` callback, or an `approve` that answers
 *   `'defer'`, comes back as deferred when the host can take notices.
 * - tools/bash.ts (`startBashRun`): makes the request (client/approvals.ts, `Approvals.request`);
 *   a background call answers `waiting for approval: <id>` at once, a foreground call waits for the
 *   decision within its timeout (asking the MCP client meanwhile, mcp/approval-prompt.ts).
 * - workflows/bash-approval.ts: waits for one decision (`decide` update or signal) up to its expiry;
 *   approved, it has the prepared `bashTask` started by the `startApprovedRun` activity
 *   (client/approved-runs.ts), which counts a background run against the session's background
 *   quota first; it tells the session by notice (workflows/completion-notice.ts), unless the
 *   foreground caller took the answer itself.
 * - Decisions: the CLI (`durable-bash approvals`, `approve`, `deny`), a `decide` signal from the Web
 *   UI or `temporal workflow signal`, an MCP client's elicitation answer.
 * Pure: workflow code renders its notices with it.
 */
import { tooManyBackgroundTasks } from './errors.js';
import type { NoticeTarget, TaskStart } from './task.js';

/** A request's id: `approval-` and a UUID; its workflow's id. */
const APPROVAL_ID_SHAPE = /^approval-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `value` has the shape of an approval request id (it may still name none). */
export function isApprovalIdShape(value: string): boolean {
  return APPROVAL_ID_SHAPE.test(value);
}

/** What was asked: the call as the policy saw it, and why it asked. */
export interface ApprovalRequest {
  command: string;
  /** The resolved workdir; absent for the worker's default. */
  workdir?: string;
  /** The agent session the command would run for. */
  sessionId: string;
  background: boolean;
  /** The reason of the policy's `ask`: the rule that asked. */
  reason: string;
}

/** A decision: who decided and how; the decider is kept in the history. */
export interface ApprovalDecision {
  approved: boolean;
  /** Who decided: a person, a CLI user (`user@host`), `mcp-client:<name>`, `claude-code:<conversation>`. */
  by: string;
  /** Why (a denial's reason is shown to the model). */
  reason?: string;
}

/**
 * A decision as the `decide` update or signal carries it: it names the request it decides, so a
 * decision copied from another request's history is refused (shared/addressed-payload.ts).
 */
export interface DecideRequest extends ApprovalDecision {
  /** The request's id, its workflow's: a decision naming another request, or none, is refused. */
  approvalId: string;
}

/** What a request's workflow starts with. */
export interface ApprovalInput {
  approvalId: string;
  request: ApprovalRequest;
  /** The run to start once approved, prepared by the client that asked. */
  start: TaskStart;
  /**
   * A foreground call's run as a background one that keeps the call's timeout: started instead when
   * the approval comes after its caller stopped waiting (its own `start` is then nobody's to wait for).
   */
  backgroundStart?: TaskStart;
  /**
   * The session's background quota at the agent host that asked (`maxBackgroundTasksPerSession`): an
   * approved run that starts in the background is counted against it then. Absent: not counted.
   */
  maxBackgroundTasks?: number;
  /** How long a foreground caller waits for the decision, from the request; absent for a background call. */
  callerWaitMs?: number;
  /** A request undecided this long is denied (`approvalExpiryMs`). */
  expiryMs: number;
  /** Where the session's notices go. */
  notice: NoticeTarget;
  /** The owner search attribute as the request holds it, for a notice that must mark itself undelivered. */
  ownerAttribute?: string;
}

/**
 * How a request ended: the workflow's result. `refused`: approved by `by`, but the run was refused
 * as it started, the session already running `running` background tasks of its `limit`.
 */
export type ApprovalOutcome =
  | { kind: 'approved'; by: string; taskId: string; background: boolean }
  | { kind: 'refused'; by: string; running: number; limit: number }
  | { kind: 'denied'; by: string; reason?: string }
  | { kind: 'expired'; afterMs: number };

/** What the `startApprovedRun` activity is asked: the approved run, and its session's quota. */
export interface ApprovedRunRequest {
  start: TaskStart;
  /** The session the run is for. */
  sessionId: string;
  /** The session's background quota, for a run that starts in the background; absent: not counted. */
  maxBackgroundTasks?: number;
}

/** What the `startApprovedRun` activity answers: the run started, or the quota refused it (nothing started). */
export type ApprovedRunStart = { kind: 'started' } | { kind: 'overQuota'; running: number; limit: number };

/**
 * The approval request's activity, on the command queue (client/approved-runs.ts): the approved
 * run's start, counted first against its session's background quota when it starts in the background.
 */
export interface ApprovalActivities {
  startApprovedRun(request: ApprovedRunRequest): Promise<ApprovedRunStart>;
}

/** What the `decide` update answers when it applied the decision. */
export const decisionApplied = (approvalId: string, decision: ApprovalDecision) =>
  `${decision.approved ? 'approved' : 'denied'} ${approvalId}`;

/** A second decision, refused in one line. */
export const alreadyDecided = (approvalId: string, earlier: ApprovalDecision) =>
  `approval ${approvalId} was already ${earlier.approved ? 'approved' : 'denied'} by ${earlier.by}: nothing changed`;

/** A decision for a request past its expiry, or closed. */
export const approvalClosed = (approvalId: string) =>
  `approval ${approvalId} is no longer waiting for a decision: nothing changed`;

/** A decision that is none. */
export const badDecision = () =>
  'decide: expected {"approvalId": "<the request id>", "approved": true|false, "by": "<who>", "reason"?: "<why>"}';

/** The shape of a decision, with the request's id in it, as the Web UI's signal dialog takes it. */
export const decideShape = (approvalId: string) =>
  `{"approvalId": "${approvalId}", "approved": true, "by": "<you>"}`;

/** What a background call answers: the id as `durable-bash approvals` lists it and `approve` takes it. */
export const waitingForApproval = (approvalId: string) => `waiting for approval: ${approvalId}`;

/** What a foreground call that stopped waiting says of its request. */
const staysOpen = (approvalId: string) =>
  `request ${approvalId} stays open, and if it is approved the command runs in the background, within its timeout, with a notice to this session`;

/** A request refused because its session has `pending` requests waiting already, its `limit`. */
export const tooManyPendingApprovals = (pending: number, limit: number) =>
  `this session has ${pending} approval requests pending (the limit is ${limit}); wait for a decision on one (bash_list shows them)`;

/** A foreground call's refusal when no decision came within its wait: the request stays open. */
export const noDecisionInTime = (approvalId: string, waitedMs: number) =>
  `no decision within ${waitedMs}ms; ${staysOpen(approvalId)}`;

/** A foreground call's refusal when it was aborted while it waited. */
export const abortedWhileWaiting = (approvalId: string) =>
  `the call was aborted while waiting for approval; ${staysOpen(approvalId)}`;

/** A foreground call's refusal when the request was denied (the reason is the denial's). */
export const deniedBy = (decision: { by: string; reason?: string }) =>
  `denied by ${decision.by}${decision.reason ? `: ${decision.reason}` : ''}`;

/** The command as a notice names it: its first line, cut. */
function commandShown(command: string): string {
  const first = command.split('\n', 1)[0] ?? '';
  const cut = first.length > 200 ? `${first.slice(0, 200)}…` : first;
  return first === command ? cut : `${cut} …`;
}

/** The notice a session gets when a request it made is decided, or expires. */
export function approvalNotice(approvalId: string, command: string, outcome: ApprovalOutcome): string {
  const shown = `\`${commandShown(command)}\``;
  switch (outcome.kind) {
    case 'approved':
      return `approval ${approvalId} granted by ${outcome.by}: ${shown} started as background task ${outcome.taskId}. Read its output with bash_output.`;
    case 'refused':
      return `approval ${approvalId} granted by ${outcome.by}, but ${shown} did not start: ${tooManyBackgroundTasks(outcome.running, outcome.limit)}`;
    case 'denied':
      return `approval ${approvalId} denied by ${outcome.by}${outcome.reason ? `: ${outcome.reason}` : ''}. ${shown} did not run.`;
    case 'expired':
      return `approval ${approvalId} expired with no decision after ${outcome.afterMs}ms: ${shown} did not run.`;
  }
}

/** What an entry point that can ask someone now (an MCP client, by elicitation) is asked. */
export interface ApprovalQuestion extends ApprovalRequest {
  approvalId: string;
}

/**
 * Asks someone for a decision now, on the caller's own channel, while the durable request waits for
 * one from anywhere: the decision, or undefined when they gave none (dismissed, not supported).
 * `signal` aborts when the request no longer waits for this answer.
 */
export type ApprovalPrompt = (
  question: ApprovalQuestion,
  signal: AbortSignal,
) => Promise<ApprovalDecision | undefined>;
