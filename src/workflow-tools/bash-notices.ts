/**
 * Receiving notices in an agent workflow, each once: a task's completion notice once per task (one
 * that is reset and ends again signals again, and that second notice is dropped here), a monitor's
 * notices once per notice id. Plain workflow code: no I/O, deterministic.
 */
import { setHandler, workflowInfo } from '@temporalio/workflow';
import { ignoredSignalForOther } from '../workflows/addressed-payloads.js';
import { type BashNotice, bashNoticeSignal } from '../workflows/notice-signal.js';
import { ignoredUnencryptedSignal } from '../workflows/unencrypted-payloads.js';

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
  // Completion notices by task id; a monitor's, in order, by the highest number each task's reached
  // (so what is carried across a continue-as-new stays one entry a task, however chatty).
  const seen = new Set<string>();
  const matched = new Map<string, number>();
  const take = (id: string): boolean => {
    const match = MATCH_ID.exec(id);
    if (match === null) {
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    }
    const [, taskId = '', n = '0'] = match;
    if ((matched.get(taskId) ?? 0) >= Number(n)) return false;
    matched.set(taskId, Number(n));
    return true;
  };
  for (const id of noticed) take(id);
  setHandler(bashNoticeSignal, (notice) => {
    if (ignoredUnencryptedSignal(bashNoticeSignal.name, notice)) return;
    // A notice copied from another agent workflow's history: that session's, not this one's.
    const { workflowId } = workflowInfo();
    const named = notice?.agentWorkflowId;
    if (ignoredSignalForOther(bashNoticeSignal.name, 'agentWorkflowId', workflowId, named, 'optional'))
      return;
    if (take(notice.noticeId ?? notice.taskId)) handler(notice);
  });
  return {
    noticed: () => [...seen, ...[...matched].map(([taskId, n]) => `${taskId}-match-${n}`)],
  };
}

/** A monitor's notice id: `<task id>-match-<n>`. */
const MATCH_ID = /^(.+)-match-(\d+)$/;
