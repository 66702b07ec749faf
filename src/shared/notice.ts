/**
 * The completion notice a background task's owning session receives. Pure, so workflow code may
 * build the text.
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
