import Table from 'cli-table3';
import type { PendingApproval } from '../client/approvals.js';
import type { ReminderSummary } from '../client/reminders.js';
import type { TaskSummary } from '../client/task-list.js';
import { restartsNote } from '../shared/host-restart.js';
import { shownLine, shownLineCut, shownRows } from '../shared/shown-text.js';

/** Widest command a listing's column shows, a longer one cut with `…`: a table row stays one line. */
const COMMAND_WIDTH_CHARS = 60;

/** Narrowest text an operator's approval listing wraps to, however narrow the terminal. */
const NARROWEST_ROW_CHARS = 40;

/** Width of a field's label in the approval listing: the longest, `command`, and two spaces. */
const LISTING_LABEL_CHARS = 9;

/** Follows the status of an ended task whose session never got its completion notice (`bash_list`). */
export const NOTICE_NOT_DELIVERED = '(notice not delivered)';

/**
 * How a listing shows a command in its column: as the model wrote it, its first line (`bash_list`:
 * the model's own commands), or in the shown form (shared/shown-text.ts) for a person
 * (`durable-bash ps`), where no character of it reaches their terminal as a control. Either way cut
 * to the column's width.
 */
export type CommandCell = 'model' | 'shown';

/**
 * A task listing as plain aligned columns under a header, like `docker ps` (`durable-bash ps`,
 * `bash_list`): id, status, age, and the command cut to a readable width.
 */
export function taskTable(tasks: TaskSummary[], now: Date, cell: CommandCell = 'model'): string {
  return plainTable(
    ['ID', 'STATUS', 'AGE', 'COMMAND'],
    tasks.map((task) => [
      task.taskId,
      `${task.status}${restartsNote(task.restarts)}${task.noticeNotDelivered ? ` ${NOTICE_NOT_DELIVERED}` : ''}`,
      age(task.startedAt, now),
      cell === 'model' ? commandCell(task.command) : shownLineCut(task.command, COMMAND_WIDTH_CHARS),
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

/** A session's own pending approval requests, as `bash_list` shows them: the oldest first, with the rule that asked. */
export function approvalTable(approvals: PendingApproval[], now: Date): string {
  return plainTable(
    ['APPROVAL', 'AGE', 'COMMAND', 'REASON'],
    approvals.map((approval) => [
      approval.approvalId,
      age(approval.requestedAt, now),
      commandCell(approval.command),
      commandCell(approval.reason),
    ]),
  );
}

/**
 * Pending approval requests as a person decides on them (`durable-bash approvals`), the oldest
 * first: a row of columns (id, age, session, how it runs), then its command, workdir and reason
 * whole, in the shown form (shared/shown-text.ts), each in rows of at most `widthChars`: a row
 * ending in a lone `\` goes on in the next.
 */
export function approvalListing(approvals: PendingApproval[], now: Date, widthChars: number): string {
  const heads = plainTable(
    ['APPROVAL', 'AGE', 'SESSION', 'RUNS'],
    approvals.map((approval) => [
      approval.approvalId,
      age(approval.requestedAt, now),
      shownLine(approval.sessionId),
      approval.background ? 'background' : 'foreground',
    ]),
  ).split('\n');
  return [
    heads[0],
    ...approvals.flatMap((approval, i) => [
      heads[i + 1],
      ...listingField('command', approval.command, widthChars),
      ...(approval.workdir !== undefined ? listingField('workdir', approval.workdir, widthChars) : []),
      ...listingField('reason', approval.reason, widthChars),
    ]),
  ].join('\n');
}

/** A request's field in `approvalListing`: its label, indented under the request's row, then its value's rows. */
function listingField(label: string, value: string, widthChars: number): string[] {
  const prefix = `  ${label.padEnd(LISTING_LABEL_CHARS)}`;
  const rows = shownRows(value, Math.max(NARROWEST_ROW_CHARS, widthChars) - prefix.length);
  return rows.map((row, i) => `${i === 0 ? prefix : ' '.repeat(prefix.length)}${row}`);
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

/** A command's (or a note's) first line as the model wrote it, cut to the table's width. */
function commandCell(command: string): string {
  const first = command.split('\n')[0] ?? '';
  const line = first.length < command.length ? `${first} …` : first;
  return line.length > COMMAND_WIDTH_CHARS ? `${line.slice(0, COMMAND_WIDTH_CHARS - 1)}…` : line;
}
