/**
 * Reminders (`bash_remind`): a note a session asks to be told later, as a notice, by a durable timer
 * (the `bashReminder` workflow). Their ids, limits and the texts the model sees. Pure: workflow
 * code renders the notice with it.
 */
import type { NoticeOutcome } from './notice.js';
import type { NoticeTarget } from './task.js';

/** The longest a reminder may wait: 30 days, well inside any namespace's history limits (one timer). */
export const MAX_REMINDER_AFTER_MS = 30 * 24 * 60 * 60_000;

/** The most bytes of UTF-8 a reminder's note may hold: a line or two for the model to read back. */
export const MAX_REMINDER_NOTE_BYTES = 1024;

/** The most reminders one session may have pending at once. */
export const MAX_REMINDERS_PER_SESSION = 20;

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
}

/** How a reminder that fired ended (a cancelled one closes as cancelled). */
export type ReminderOutcome = NoticeOutcome;

/** The notice a reminder delivers. */
export const reminderNotice = (note: string) => `reminder: ${note}`;

/** What `bash_remind` answers when it set one. */
export const reminderSet = (reminderId: string, afterMs: number) =>
  `reminder ${reminderId} set: it fires in ${afterMs}ms`;

/** What `bash_remind` answers when it cancelled one. */
export const reminderCancelled = (reminderId: string) => `cancelled reminder ${reminderId}`;
