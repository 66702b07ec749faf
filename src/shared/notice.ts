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

/** The notice text: what ended and how (`statusLine`), and where to read the output. */
export function noticeText(taskId: string, statusLine: string): string {
  return `background bash task ${taskId} finished ${statusLine}. Read its output with bash_output.`;
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
