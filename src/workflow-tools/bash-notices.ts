/**
 * Receiving completion notices in an agent workflow, once per task. A task's workflow signals its
 * agent when it ends; one that is reset and ends again signals again, and that second notice is
 * dropped here. Plain workflow code: no I/O, deterministic.
 */
import { setHandler } from '@temporalio/workflow';
import { type BashNotice, bashNoticeSignal } from '../workflows/notice-signal.js';

export interface BashNoticeInbox {
  /** The ids of the tasks whose notice came, to carry across a continue-as-new. */
  noticed(): string[];
}

/**
 * Handles `bashNoticeSignal` with `handler`, each task's notice once. Pass `noticed` from the
 * previous run (`inbox.noticed()`) when the agent continues as new.
 */
export function onBashNotice(
  handler: (notice: BashNotice) => void,
  noticed: Iterable<string> = [],
): BashNoticeInbox {
  const seen = new Set(noticed);
  setHandler(bashNoticeSignal, (notice) => {
    if (seen.has(notice.taskId)) return;
    seen.add(notice.taskId);
    handler(notice);
  });
  return { noticed: () => [...seen] };
}
