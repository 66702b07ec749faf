import Table from 'cli-table3';
import type { PendingApproval } from '../client/approvals.js';
import type { ReminderSummary } from '../client/reminders.js';
import type { TaskSummary } from '../client/task-list.js';
import { restartsNote } from '../shared/host-restart.js';

/** Widest command a listing shows; a longer one is cut with `…`. */
const COMMAND_WIDTH = 60;

/** Follows the status of an ended task whose session never got its completion notice (`bash_list`). */
export const NOTICE_NOT_DELIVERED = '(notice not delivered)';

/**
 * A task listing as plain aligned columns under a header, like `docker ps` (`durable-bash ps`,
 * `bash_list`): id, status, age, and the command's first line cut to a readable width.
 */
export function taskTable(tasks: TaskSummary[], now: Date): string {
  return plainTable(
    ['ID', 'STATUS', 'AGE', 'COMMAND'],
    tasks.map((task) => [
      task.taskId,
      `${task.status}${restartsNote(task.restarts)}${task.noticeNotDelivered ? ` ${NOTICE_NOT_DELIVERED}` : ''}`,
      age(task.startedAt, now),
      commandCell(task.command),
    ]),
  );
}

/** A session's pending reminders, as `bash_list` shows them under its tasks: the soonest first. */
export function reminderTable(reminders: ReminderSummary[], now: Date): string {
  return plainTable(
    ['REMINDER', 'FIRES IN', 'NOTE'],
    reminders.map((reminder) => [
      reminder.reminderId,
      age(now, reminder.firesAt),
      commandCell(reminder.note),
    ]),
  );
}

/**
 * Pending approval requests, the oldest first, with the rule that asked: with their sessions
 * (`durable-bash approvals`), or without for one session's own (`bash_list`).
 */
export function approvalTable(approvals: PendingApproval[], now: Date, withSession = true): string {
  return plainTable(
    ['APPROVAL', 'AGE', ...(withSession ? ['SESSION'] : []), 'COMMAND', 'REASON'],
    approvals.map((approval) => [
      approval.approvalId,
      age(approval.requestedAt, now),
      ...(withSession ? [approval.sessionId] : []),
      commandCell(approval.command),
      commandCell(approval.reason),
    ]),
  );
}

/** Rows as plain aligned columns under a header, two spaces apart, like `docker ps`. */
function plainTable(head: string[], rows: string[][]): string {
  const table = new Table({
    head,
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  table.push(...rows);
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

/** Time since `since`, in its largest whole unit: 42s, 5m, 3h, 2d. */
export function age(since: Date, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** A command's (or a note's) first line, cut to the table's width. */
function commandCell(command: string): string {
  const first = command.split('\n')[0] ?? '';
  const line = first.length < command.length ? `${first} …` : first;
  return line.length > COMMAND_WIDTH ? `${line.slice(0, COMMAND_WIDTH - 1)}…` : line;
}
