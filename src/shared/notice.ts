/**
 * The completion notice a background task's owning session receives. Pure, so workflow code may
 * build the text. Its whole path, from the task's end to the model (docs/NOTICES.md says it in prose):
 * - workflows/task-end.ts: the task's run, at its end, starts the notice (`startNotice`), or, when
 *   reads have seen the task, hands it to its reader (`leaveNoticeToReader`);
 *   workflows/output-reader.ts then sends it in its turn among the reads.
 * - shared/render-notice.ts: the lines after the first, only output no read has shown (or a
 *   terminal task's last screen); `noticeText` below: the first line.
 * - workflows/completion-notice.ts (`completionNotice`): one workflow per notice, retrying the
 *   inject within the notice window; if the window runs out it marks itself undelivered, which
 *   client/notice-marks.ts and tools/bash-list.ts show as `(notice not delivered)`.
 * - activities/inject-notice.ts, served by worker/agent-worker.ts on the agent host's queue:
 *   hands the text to `AgentSessions.inject` (below), once, dropping repeats
 *   (agent-host/repeated-notices.ts).
 * - Where it lands: agent-host/ (the library), mcp/mcp-notices.ts and notice-store.ts (the MCP
 *   server), dsh/notices.ts (the harness plugin); for an agent that is a workflow, a signal
 *   (workflows/notice-signal.ts, workflow-tools/bash-notices.ts).
 */

/** Where a notice comes from, as the harness's `inject` receives it. */
export interface NoticeSource {
  kind: 'plugin';
  plugin: string;
}

/** durable-bash's notices come from the harness's `tool-bash` plugin slot. */
export const NOTICE_SOURCE: Readonly<NoticeSource> = { kind: 'plugin', plugin: 'tool-bash' };

/**
 * The notice text: what ended and how (`statusLine`), and where to read the output; then, on the
 * lines after, its last output when the run has one to show (`renderNoticeOutput`).
 */
export function noticeText(taskId: string, statusLine: string, output?: string): string {
  const first = `background bash task ${taskId} finished ${statusLine}. Read its output with bash_output.`;
  return output === undefined ? first : `${first}\n${output}`;
}

/** How a completion notice ended. */
export const NoticeOutcome = {
  /** The owning session received it. */
  delivered: 'delivered',
  /** The owning session no longer exists (disposed); the notice is dropped. */
  sessionGone: 'session-gone',
  /** No agent worker delivered it within the notice window; the notice is dropped. */
  expired: 'expired',
} as const;
export type NoticeOutcome = (typeof NoticeOutcome)[keyof typeof NoticeOutcome];

/** The harness's agent sessions, as far as a completion notice needs them. */
export interface AgentSessions {
  /**
   * Adds `content` to the session's context for its next model request (not a wake-up). Resolves
   * true once delivered into a live session, false when the session no longer exists (disposed).
   * A throw is a transient failure: the notice is retried within its window. A retry after an
   * inject whose answer was lost (the agent host died) repeats `noticeId`: drop a repeat to keep
   * the notice exactly once.
   */
  inject(
    sessionId: string,
    content: string,
    options: { source: NoticeSource; noticeId: string },
  ): Promise<boolean>;
}

/**
 * How many delivered notice ids an agent host remembers, to drop an inject repeated after its
 * answer was lost (the MCP server's notice file, the harness plugin's memory).
 */
export const REMEMBERED_NOTICE_IDS = 1_000;
