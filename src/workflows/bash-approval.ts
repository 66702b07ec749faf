/**
 * A durable approval request (shared/approval.ts has the whole path): one workflow per request, on
 * the command queue, owned as a task is. It waits for one decision, by update (the CLI, an MCP
 * client's answer: a second one is refused in one line) or by signal (the Web UI, `temporal
 * workflow signal`: a second one is dropped), up to its expiry; a decision names the request it
 * decides (`approvalId`), so one copied from another request's history decides nothing. Approved,
 * it has the prepared `bashTask` started by an activity that counts a background run against the
 * session's background quota first (a run over it does not start: the approval stands, and the
 * outcome says why); the session is told by notice unless a foreground caller still waits for the
 * answer. Waiting costs the server nothing: one timer, and the workflow is evicted.
 */
import {
  condition,
  defineSignal,
  defineUpdate,
  log,
  proxyActivities,
  setHandler,
  upsertMemo,
} from '@temporalio/workflow';
import { argumentForOther } from '../shared/addressed-payload.js';
import {
  type ApprovalActivities,
  type ApprovalDecision,
  type ApprovalInput,
  type ApprovalOutcome,
  alreadyDecided,
  approvalClosed,
  approvalNotice,
  badDecision,
  type DecideRequest,
  decisionApplied,
} from '../shared/approval.js';
import { oneLine } from '../shared/checks.js';
import { ignoredSignalForOther, refuseInputForOther } from './addressed-payloads.js';
import { deliverOwnNotice } from './completion-notice.js';
import {
  ignoredUnencryptedSignal,
  refuseUnencryptedArgument,
  refuseUnencryptedInput,
} from './unencrypted-payloads.js';

/**
 * A decision that answers: applied, or refused in one line (for another request, decided already,
 * or no longer waiting).
 */
export const decideUpdate = defineUpdate<string, [DecideRequest]>('decide');

/** A decision from the Web UI or `temporal workflow signal`: a second one is dropped (and logged). */
export const decideSignal = defineSignal<[DecideRequest]>('decide');

/** The foreground caller stopped waiting (aborted): an approval then starts the run in the background. */
export const callerLeftSignal = defineSignal('callerLeft');

/**
 * Time before a foreground caller's wait ends within which an approval runs the command in the
 * background instead: the answer must still reach the caller, who would otherwise leave a
 * foreground run nobody reads.
 */
const CALLER_ANSWER_MARGIN_MS = 2_000;

/** A decision as the handlers' descriptions give it (the Web UI shows them beside its signal dialog). */
const DECISION_SHAPE =
  '{"approvalId": "<this request id>", "approved": true|false, "by": "<who>", "reason"?: "<why>"}';

const { startApprovedRun } = proxyActivities<ApprovalActivities>({
  // A visibility count, a describe of each counted task at the limit, and a start: seconds at most.
  startToCloseTimeout: '1 minute',
  // A server that does not answer is retried until it does: the decision has been made.
  retry: { maximumInterval: '30 seconds' },
});

export async function bashApproval(input: ApprovalInput): Promise<ApprovalOutcome> {
  refuseUnencryptedInput(input);
  // A request's input copied from another's history would start that request's run once decided.
  refuseInputForOther('approvalId', input.approvalId);
  const requestedAtMs = Date.now();
  let decision: ApprovalDecision | undefined;
  let closed = false;
  let callerLeft = false;

  const refusal = (candidate: unknown): string | undefined => {
    if (!isDecision(candidate)) return badDecision();
    // A decision copied from another request's history (its ciphertext is valid anywhere).
    if (candidate.approvalId !== input.approvalId)
      return argumentForOther('decide', 'approvalId', input.approvalId, candidate.approvalId);
    if (decision !== undefined) return alreadyDecided(input.approvalId, decision);
    if (closed) return approvalClosed(input.approvalId);
    return undefined;
  };
  const apply = (made: DecideRequest) => {
    const reason = oneLine(made.reason ?? '');
    decision = { approved: made.approved, by: oneLine(made.by), ...(reason !== '' ? { reason } : {}) };
    upsertMemo({ decision });
  };
  setHandler(
    decideUpdate,
    (made) => {
      apply(made);
      return decisionApplied(input.approvalId, decision ?? made);
    },
    {
      validator: (made) => {
        refuseUnencryptedArgument(decideUpdate.name, made);
        const refused = refusal(made);
        if (refused !== undefined) throw new Error(refused);
      },
      description: `Approve or deny the command: ${DECISION_SHAPE}; a decision naming another request (or none) is refused`,
    },
  );
  setHandler(
    decideSignal,
    (sent) => {
      if (ignoredUnencryptedSignal(decideSignal.name, sent)) return;
      if (ignoredSignalForOther(decideSignal.name, 'approvalId', input.approvalId, sent?.approvalId)) return;
      // A person typing the signal in the Web UI may leave out who they are: the history's event
      // still names the sender's identity.
      const made = {
        ...sent,
        by: typeof sent?.by === 'string' && sent.by.trim() !== '' ? sent.by : 'a decide signal',
      };
      const refused = refusal(made);
      if (refused === undefined) apply(made);
      else log.warn(`a decide signal was dropped: ${refused}`, { approvalId: input.approvalId });
    },
    {
      description: `Approve or deny the command: ${DECISION_SHAPE}; a decision naming another request (or none) is dropped, and so is a second one, and one not encrypted when payloads are (set the codec server as the codec endpoint)`,
    },
  );
  setHandler(callerLeftSignal, () => {
    callerLeft = true;
  });

  const callerWaits = () =>
    input.callerWaitMs !== undefined &&
    !callerLeft &&
    Date.now() - requestedAtMs < input.callerWaitMs - CALLER_ANSWER_MARGIN_MS;

  const decided = await condition(() => decision !== undefined, input.expiryMs);
  closed = true;
  const made = decision;
  // A foreground caller still waiting takes the answer itself (the workflow's result).
  const callerTakesIt = callerWaits();
  let outcome: ApprovalOutcome;
  if (!decided || made === undefined) {
    outcome = { kind: 'expired', afterMs: input.expiryMs };
  } else if (!made.approved) {
    outcome = { kind: 'denied', by: made.by, ...(made.reason !== undefined ? { reason: made.reason } : {}) };
  } else {
    const start = callerTakesIt ? input.start : (input.backgroundStart ?? input.start);
    const started = await startApprovedRun({
      start,
      sessionId: input.request.sessionId,
      ...(input.maxBackgroundTasks !== undefined ? { maxBackgroundTasks: input.maxBackgroundTasks } : {}),
    });
    outcome =
      started.kind === 'started'
        ? { kind: 'approved', by: made.by, taskId: start.input.taskId, background: start.input.background }
        : { kind: 'refused', by: made.by, running: started.running, limit: started.limit };
  }
  upsertMemo({ outcome });
  if (!callerTakesIt)
    await deliverOwnNotice(
      {
        workflowId: input.approvalId,
        notice: input.notice,
        ...(input.ownerAttribute !== undefined ? { ownerAttribute: input.ownerAttribute } : {}),
      },
      approvalNotice(input.approvalId, input.request.command, outcome),
      'approval notice',
    );
  return outcome;
}

/** A decision's shape; its `approvalId` is checked against the request's own id apart. */
function isDecision(value: unknown): value is Omit<DecideRequest, 'approvalId'> & { approvalId?: unknown } {
  const candidate = value as Partial<ApprovalDecision> | undefined;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.approved === 'boolean' &&
    typeof candidate.by === 'string' &&
    candidate.by.trim() !== '' &&
    (candidate.reason === undefined || typeof candidate.reason === 'string')
  );
}
