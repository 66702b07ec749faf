/**
 * Reminders (`bash_remind`): a note a session asks to be told later, as a notice, by a durable timer
 * (the `bashReminder` workflow). Their ids and the texts the model sees (their limits are in
 * limits.ts). Pure: workflow code renders the notice with it.
 */
import type { NoticeOutcome } from './notice.js';
import type { NoticeTarget } from './task.js';

/** A reminder's id: `remind-` and a UUID; its workflow's id, which a notice names. */
const REMINDER_ID_SHAPE = /^remind-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `value` has the shape of a reminder id (it may still name none). */
export function isReminderIdShape(value: string): boolean {
  return REMINDER_ID_SHAPE.test(value);
}

/** What a reminder's workflow starts with. */
export interface ReminderInput {
  reminderId: string;
  note: string;
  /** How long after its workflow's start it fires (`after_ms`): a durable timer, on the server's clock. */
  afterMs: number;
  /** Where the notice goes: the session's agent host, or the agent workflow. */
  notice: NoticeTarget;
  /** The owner search attribute as the reminder holds it, for a notice that must mark itself undelivered. */
  ownerAttribute?: string;
  /** Tasks of the session whose ends, all of them, fire it sooner (`task_ids`). */
  taskIds?: string[];
  /** The status lines of those that had ended when it was set, by task id. */
  ended?: Record<string, string>;
}

/** How a reminder that fired ended (a cancelled one closes as cancelled). */
export type ReminderOutcome = NoticeOutcome;

/**
 * The notice a reminder delivers: `reminder: <note>`; for one that waited for tasks, a line saying
 * why it fired, then each task's id and status line (`[status: running]` for one still running).
 */
export function reminderNotice(
  note: string,
  tasks: ReadonlyArray<{ taskId: string; statusLine?: string }> = [],
  sooner = false,
): string {
  const first = `reminder: ${note}`;
  if (tasks.length === 0) return first;
  const endedCount = tasks.filter((task) => task.statusLine !== undefined).length;
  const why = sooner
    ? '[every task it waited for has ended]'
    : `[its time came: ${endedCount} of the ${tasks.length} tasks it waited for ${endedCount === 1 ? 'has' : 'have'} ended]`;
  const lines = tasks.map((task) => `${task.taskId} ${task.statusLine ?? '[status: running]'}`);
  return [first, why, ...lines].join('\n');
}

/** What `bash_remind` answers when it set one. */
export const reminderSet = (reminderId: string, afterMs: number, taskIds: readonly string[] = []) =>
  `reminder ${reminderId} set: it fires in ${afterMs}ms${taskIds.length > 0 ? `, or sooner when ${taskIds.length === 1 ? `task ${taskIds[0]} has` : `tasks ${taskIds.join(', ')} have all`} ended` : ''}`;

/** What `bash_remind` answers when it cancelled one. */
export const reminderCancelled = (reminderId: string) => `cancelled reminder ${reminderId}`;
