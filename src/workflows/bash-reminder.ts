/**
 * A session's reminder (`bash_remind`): one durable timer, then the notice `reminder: <note>`,
 * through the path a completion notice takes (the inject activity on the session's agent host, or a
 * signal to the agent workflow). A timer is what Temporal keeps across restarts of every process,
 * and under time skipping it fires at once.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  sleep,
} from '@temporalio/workflow';
import { NoticeOutcome } from '../shared/notice.js';
import { type ReminderInput, type ReminderOutcome, reminderNotice } from '../shared/reminder.js';
import type { WorkflowNoticeTarget } from '../shared/task.js';
import { completionNotice } from './completion-notice.js';
import { bashNoticeSignal } from './notice-signal.js';
import { countNotice } from './workflow-metrics.js';

export async function bashReminder(input: ReminderInput): Promise<ReminderOutcome> {
  // A cancellation (`bash_remind { cancel }`) ends the workflow here, closed as cancelled.
  await sleep(input.afterMs);
  const text = reminderNotice(input.note);
  const { notice } = input;
  if ('workflowId' in notice) return signalReminder(input.reminderId, notice, text);
  // The delivery is a completion notice's, run here: its inject's notice id is this workflow's id.
  return completionNotice({
    ...notice,
    content: text,
    ...(input.ownerAttribute !== undefined ? { ownerAttribute: input.ownerAttribute } : {}),
  });
}

/** The reminder of an agent workflow: a signal, as its tasks' notices are; a closed one is not told. */
async function signalReminder(
  reminderId: string,
  target: WorkflowNoticeTarget,
  text: string,
): Promise<ReminderOutcome> {
  try {
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(target.workflowId).signal(bashNoticeSignal, { taskId: reminderId, text }),
    );
    countNotice(NoticeOutcome.delivered);
    return NoticeOutcome.delivered;
  } catch (err) {
    countNotice(NoticeOutcome.sessionGone);
    log.info('reminder not delivered: the agent workflow is closed', { reminderId, error: String(err) });
    return NoticeOutcome.sessionGone;
  }
}
