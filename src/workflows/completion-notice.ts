import { RetryState } from '@temporalio/common';
import {
  ActivityFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { NoticeActivities } from '../activities/inject-notice.js';
import {
  NOTICE_INJECT_TIMEOUT_MS,
  NOTICE_RETRY_INITIAL_INTERVAL_MS,
  NOTICE_RETRY_MAX_INTERVAL_MS,
} from '../shared/limits.js';
import { NoticeOutcome } from '../shared/notice.js';
import {
  NOTICE_UNDELIVERED,
  noticeSearchAttribute,
  ownerSearchAttribute,
} from '../shared/search-attributes.js';
import type { NoticeTarget, SessionNoticeTarget, WorkflowNoticeTarget } from '../shared/task.js';
import { type BashNotice, bashNoticeSignal } from './notice-signal.js';
import { refuseUnencryptedInput } from './unencrypted-payloads.js';
import { countNotice } from './workflow-metrics.js';

export interface CompletionNoticeInput extends SessionNoticeTarget {
  /** The notice text (see `noticeText`). */
  content: string;
  /**
   * The task's owner search attribute as the task holds it (a keyed hash when payloads are
   * encrypted, which this workflow could not compute). Absent in notices started before it was passed.
   */
  ownerAttribute?: string;
}

/**
 * Delivers one background task's completion notice to its owning session, through the inject
 * activity on the owning agent host's queue. Started by `bashTask` as an abandoned child, so the task
 * closes with its result at once while the notice waits up to its window for an agent worker.
 * Ends quietly in every case: delivered, session gone, or window over. Over, it marks itself
 * undelivered, which its session's `bash_list` shows.
 */
export async function completionNotice(input: CompletionNoticeInput): Promise<NoticeOutcome> {
  refuseUnencryptedInput(input);
  const outcome = await injectWithinWindow(input, input.content);
  countNotice(outcome);
  if (outcome === NoticeOutcome.expired) markUndelivered(input);
  return outcome;
}

/**
 * Injects `content` into the session through the inject activity on its agent host's queue,
 * retried within the notice window: delivered, session gone, or expired. `noticeId` is what the
 * session drops repeats by: the workflow's id unless given (a workflow that delivers several).
 */
export async function injectWithinWindow(
  target: SessionNoticeTarget,
  content: string,
  noticeId?: string,
): Promise<NoticeOutcome> {
  const { injectNotice } = proxyActivities<NoticeActivities>({
    // Only the owning agent host's worker can reach the session.
    taskQueue: target.taskQueue,
    // The window: the notice waits this long in total (queued while no agent worker polls, or retrying).
    scheduleToCloseTimeout: target.windowMs,
    // An inject is an in-memory call; an attempt this slow means its agent host died mid-call.
    startToCloseTimeout: NOTICE_INJECT_TIMEOUT_MS,
    retry: {
      // A failed inject is transient (the host is restarting): try again soon...
      initialInterval: NOTICE_RETRY_INITIAL_INTERVAL_MS,
      // ...then back off, so a long outage costs a few dozen attempts, not thousands...
      backoffCoefficient: 2,
      // ...but not so far that a host that comes back waits long for its notice.
      maximumInterval: NOTICE_RETRY_MAX_INTERVAL_MS,
    },
  });
  try {
    return await injectNotice({
      sessionId: target.sessionId,
      content,
      ...(noticeId !== undefined ? { noticeId } : {}),
    });
  } catch (err) {
    if (!isWindowOver(err)) throw err;
    return NoticeOutcome.expired;
  }
}

/**
 * Delivers the one notice of a workflow that is not a task (a reminder, an approval request): to an
 * agent workflow by signal (a closed one is not told), or as a completion notice is delivered (the
 * inject activity within the window, with the workflow's own id as its notice id). Counted once.
 */
export async function deliverOwnNotice(
  from: { workflowId: string; notice: NoticeTarget; ownerAttribute?: string },
  content: string,
  what: string,
): Promise<NoticeOutcome> {
  const { notice } = from;
  if ('workflowId' in notice) {
    const outcome = await signalAgentWorkflow(notice, { taskId: from.workflowId, text: content }, what);
    countNotice(outcome);
    return outcome;
  }
  return completionNotice({
    ...notice,
    content,
    ...(from.ownerAttribute !== undefined ? { ownerAttribute: from.ownerAttribute } : {}),
  });
}

/**
 * Signals `notice` to an agent workflow (no child, no activity: the workflow is there or it is
 * not): delivered, or, when it has closed, the session is gone (logged as `what`). Not cancelled by
 * a cancellation of the caller: a notice that was due still goes.
 */
export async function signalAgentWorkflow(
  target: WorkflowNoticeTarget,
  notice: BashNotice,
  what: string,
): Promise<typeof NoticeOutcome.delivered | typeof NoticeOutcome.sessionGone> {
  try {
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(target.workflowId).signal(bashNoticeSignal, {
        ...notice,
        agentWorkflowId: target.workflowId,
      }),
    );
    return NoticeOutcome.delivered;
  } catch (err) {
    log.info(`${what} not delivered: the agent workflow is closed`, {
      taskId: notice.taskId,
      error: String(err),
    });
    return NoticeOutcome.sessionGone;
  }
}

/**
 * The session may still exist but never heard of the task's end: the owner and `BashTaskNotice`
 * attributes let its listing (one visibility query) find this closed run. Nothing stays open and
 * nothing waits: an ended notice costs the server no more than before.
 */
export function markUndelivered(input: Pick<CompletionNoticeInput, 'ownerAttribute'>): void {
  // An unowned task's notice has no session whose listing could match it.
  if (input.ownerAttribute === undefined) return;
  upsertSearchAttributes([
    { key: ownerSearchAttribute, value: input.ownerAttribute },
    { key: noticeSearchAttribute, value: NOTICE_UNDELIVERED },
  ]);
}

/**
 * The window ran out: the activity timed out waiting for a worker (schedule-to-close), or the
 * server stopped retrying because the next attempt would start after the window.
 */
function isWindowOver(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    (err.cause instanceof TimeoutFailure || err.retryState === RetryState.TIMEOUT)
  );
}
