/**
 * Monitors (`notify_on`, `bash_monitor`): a pattern a background task's lines are matched against
 * on its host, each match a notice to the owning session. The batches a host sends, the names both
 * sides agree on, and the texts the model sees. Pure: workflow code renders the notice with it.
 *
 * A monitor's whole path, from a printed line to the model:
 * - command-host/monitor/line-monitor.ts: the command's attempt scans each new line of its spill
 *   files (nothing reaches the server for a line that does not match), gathers matches for
 *   MONITOR_GATHER_MS, and sends them as one batch; the host keeps how far it has sent in the
 *   task's monitor file, so a batch is sent again after a crash and never skipped.
 * - worker/monitor-sink.ts: the batch, by signal-with-start to the task's notice workflow
 *   (`<task id>-notice`, workflows/monitor-notices.ts), which drops lines it already has (by offset)
 *   and delivers each batch in turn as completion notices are delivered; the task's completion
 *   notice, when it ends, comes to the same workflow, after them.
 * - `bash_monitor` (tools/bash-monitor.ts, client/task-monitors.ts): an update of that workflow,
 *   which writes the pattern on the task's host (activities/set-monitor.ts).
 */
import type { NoticeTarget } from './task.js';

export type { MonitorTarget } from './task.js';

/** One line that matched: its stream, the byte offset where it starts in that stream, and its text. */
export interface MonitorLine {
  stream: 'stdout' | 'stderr';
  offset: number;
  text: string;
}

/** What a host sends its task's notice workflow: the lines a gathering window matched. */
export interface MonitorBatch {
  /**
   * The task whose lines they are, set by the host's sink as it sends the batch: another task's
   * notice workflow ignores it (it would show these lines to that task's session).
   */
  taskId?: string;
  /** The pattern they matched (its source), as the notice names it. */
  pattern: string;
  /** The lines shown, at most MONITOR_NOTICE_LINES: stdout's in the order printed, then stderr's. */
  lines: MonitorLine[];
  /** Matching lines past those shown. */
  more: number;
  /** Set when this batch crossed the flood bound: the monitor paused itself after it. */
  pausedAfter?: number;
}

/** What the notice workflow of a monitored task starts with. */
export interface MonitorNoticesInput {
  taskId: string;
  target: NoticeTarget;
  /** The task's owner search attribute, for a completion notice that must mark itself undelivered. */
  ownerAttribute?: string;
  /** Carried across continue-as-new: where each stream's delivered lines end, and notices sent. */
  carried?: {
    upTo: { stdout: number; stderr: number };
    sent: number;
    pending: MonitorBatch[];
    taskClosed?: boolean;
    gone?: boolean;
  };
}

/** The notice workflow's type name, for a host that starts it by name (it cannot import workflows). */
export const MONITOR_NOTICES_WORKFLOW = 'monitorNotices';

/** The signal that carries a batch to the notice workflow. */
export const MONITOR_LINES_SIGNAL = 'monitorLines';

/** The signal that hands a monitored task's completion notice to its notice workflow. */
export const COMPLETION_NOTICE_SIGNAL = 'completionNotice';

/** The update `bash_monitor` sends the notice workflow: set (a pattern) or clear (null). */
export const SET_MONITOR_UPDATE = 'setMonitor';

/** The notice workflow's id: the completion notice's, so the task's end finds it. */
export const noticeWorkflowId = (taskId: string) => `${taskId}-notice`;

/** What `bash_monitor` asks the host, and the host answers. */
export interface SetMonitorRequest {
  /** The task it sets the monitor of: the notice workflow of another task refuses it. */
  taskId: string;
  /**
   * The id of the update that carries it: a request copied from the history (an older pattern, or
   * a clear) is refused under a new update id, and under its own the server answers with the
   * recorded outcome and sets nothing.
   */
  requestId: string;
  /** The new pattern, or null to clear the monitor. */
  pattern: string | null;
  /** The host queue the task runs on (its control queue takes the activity). */
  hostQueue: string;
}

/** The host's answer: set, or why not. */
export type SetMonitorAnswer =
  | { kind: 'set' }
  | { kind: 'ended' }
  | { kind: 'unmonitorable' }
  | { kind: 'host-unavailable' };

/** The pattern as a notice shows it. */
const shown = (pattern: string) => `/${pattern}/`;

/** A matching line as a notice shows it: stderr's marked, a long one cut. */
function lineText(line: MonitorLine, maxChars: number): string {
  const chars = Array.from(line.text);
  const text = chars.length > maxChars ? `${chars.slice(0, maxChars).join('')}…` : line.text;
  return line.stream === 'stderr' ? `[stderr] ${text}` : text;
}

/** The notice for one batch. */
export function monitorNoticeText(taskId: string, batch: MonitorBatch, maxLineChars: number): string {
  const count = batch.lines.length + batch.more;
  const lines = [
    `background bash task ${taskId} printed ${count} ${count === 1 ? 'line' : 'lines'} matching ${shown(batch.pattern)}:`,
    ...batch.lines.map((line) => lineText(line, maxLineChars)),
  ];
  if (batch.more > 0) lines.push(`[${batch.more} more matching lines; bash_output shows them]`);
  if (batch.pausedAfter !== undefined)
    lines.push(
      `[monitor paused: over ${batch.pausedAfter} matching lines in a minute; set it again with bash_monitor]`,
    );
  return lines.join('\n');
}

/** What `bash_monitor` answers. */
export const monitorSet = (taskId: string, pattern: string) =>
  `monitoring task ${taskId}: each line matching ${shown(pattern)} comes as a notice`;
export const monitorCleared = (taskId: string) => `cleared the monitor of task ${taskId}`;
