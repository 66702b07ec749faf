/**
 * Receiving notices in an agent workflow, each once: a task's completion notice once per task (one
 * that is reset and ends again signals again, and that second notice is dropped here), a monitor's
 * notices once per notice id. Plain workflow code: no I/O, deterministic.
 */
import { setHandler } from '@temporalio/workflow';
import { type BashNotice, bashNoticeSignal } from '../workflows/notice-signal.js';

export interface BashNoticeInbox {
  /** The ids of the notices that came (a task's id for its completion), to carry across a continue-as-new. */
  noticed(): string[];
}

/**
 * Handles `bashNoticeSignal` with `handler`, each notice once. Pass `noticed` from the
 * previous run (`inbox.noticed()`) when the agent continues as new.
 */
export function onBashNotice(
  handler: (notice: BashNotice) => void,
  noticed: Iterable<string> = [],
): BashNoticeInbox {
  const seen = new Set(noticed);
  setHandler(bashNoticeSignal, (notice) => {
    const id = notice.noticeId ?? notice.taskId;
    if (seen.has(id)) return;
    seen.add(id);
    handler(notice);
  });
  return { noticed: () => [...seen] };
}
