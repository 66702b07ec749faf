/**
 * A session's reminder (`bash_remind`): one durable timer, or sooner the ends of every task it
 * waits for (each task signals it: end-watchers.ts), then the notice `reminder: <note>`,
 * through the path a completion notice takes (the inject activity on the session's agent host, or a
 * signal to the agent workflow). A timer is what Temporal keeps across restarts of every process,
 * and under time skipping it fires at once.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { type ReminderInput, type ReminderOutcome, reminderNotice } from '../shared/reminder.js';
import { deliverOwnNotice } from './completion-notice.js';
import { watchedEndSignal } from './end-watchers.js';
import { ignoredUnencryptedSignal, refuseUnencryptedInput } from './unencrypted-payloads.js';

export async function bashReminder(input: ReminderInput): Promise<ReminderOutcome> {
  refuseUnencryptedInput(input);
  const taskIds = input.taskIds ?? [];
  const ended = new Map<string, string>(Object.entries(input.ended ?? {}));
  // The watched tasks tell their ends (and the client tells those that ended before they could).
  setHandler(watchedEndSignal, (end) => {
    if (ignoredUnencryptedSignal(watchedEndSignal.name, end)) return;
    if (taskIds.includes(end.taskId)) ended.set(end.taskId, end.statusLine);
  });
  const allEnded = () => taskIds.length > 0 && taskIds.every((taskId) => ended.has(taskId));
  // A cancellation (`bash_remind { cancel }`) ends the workflow here, closed as cancelled.
  const sooner = await condition(allEnded, input.afterMs);
  const text = reminderNotice(
    input.note,
    taskIds.map((taskId) => {
      const statusLine = ended.get(taskId);
      return statusLine === undefined ? { taskId } : { taskId, statusLine };
    }),
    sooner,
  );
  // The delivery is a completion notice's, run here: its inject's notice id is this workflow's id.
  return deliverOwnNotice(
    {
      workflowId: input.reminderId,
      notice: input.notice,
      ...(input.ownerAttribute !== undefined ? { ownerAttribute: input.ownerAttribute } : {}),
    },
    text,
    'reminder',
  );
}
