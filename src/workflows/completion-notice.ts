import { RetryState } from '@temporalio/common';
import { ActivityFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { NoticeActivities } from '../activities/inject-notice.js';
import {
  NOTICE_INJECT_TIMEOUT_MS,
  NOTICE_RETRY_INITIAL_INTERVAL_MS,
  NOTICE_RETRY_MAX_INTERVAL_MS,
} from '../shared/limits.js';
import { NoticeOutcome } from '../shared/notice.js';
import type { SessionNoticeTarget } from '../shared/task.js';
import { countNotice } from './workflow-metrics.js';

export interface CompletionNoticeInput extends SessionNoticeTarget {
  /** The notice text (see `noticeText`). */
  content: string;
}

/**
 * Delivers one background task's completion notice to its owning session, through the inject
 * activity on the owning agent host's queue. Started by `bashTask` as an abandoned child, so the task
 * closes with its result at once while the notice waits up to its window for an agent worker.
 * Ends quietly in every case: delivered, session gone, or window over.
 */
export async function completionNotice(input: CompletionNoticeInput): Promise<NoticeOutcome> {
  const { injectNotice } = proxyActivities<NoticeActivities>({
    // Only the owning agent host's worker can reach the session.
    taskQueue: input.taskQueue,
    // The window: the notice waits this long in total (queued while no agent worker polls, or retrying).
    scheduleToCloseTimeout: input.windowMs,
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
  let outcome: NoticeOutcome;
  try {
    outcome = await injectNotice({ sessionId: input.sessionId, content: input.content });
  } catch (err) {
    if (!isWindowOver(err)) throw err;
    outcome = NoticeOutcome.expired;
  }
  countNotice(outcome);
  return outcome;
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
