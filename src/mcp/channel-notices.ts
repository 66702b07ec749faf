/**
 * Notices as Claude Code channel messages (`durable-bash mcp --channel`): the capability the server
 * declares, the notification it sends, and the attributes each notice carries. Pure: mcp-notices.ts
 * sends them.
 */
import { taskIdOfNotice } from './notice-store.js';

/** The experimental capability a server declares to be a Claude Code channel. */
export const CHANNEL_CAPABILITY = 'claude/channel';

/** The notification that carries one message into the session; Claude Code starts a turn with it. */
export const CHANNEL_METHOD = 'notifications/claude/channel';

/** A channel message: the notice's text, and attributes Claude Code shows on its `<channel>` tag. */
export interface ChannelMessage {
  content: string;
  /** Keys match /^[a-zA-Z_][a-zA-Z0-9_]*$/ (they become the tag's attributes). */
  meta: Record<string, string>;
}

/** A reminder's notice id (its workflow's id, client/reminders.ts). */
const REMINDER_PREFIX = 'remind-';
/** An approval request's notice id (its workflow's id, client/approvals.ts). */
const APPROVAL_PREFIX = 'approval-';
/** A monitor batch's notice id: `<task id>-match-<n>` (workflows/monitor-notices.ts). */
const MONITOR_BATCH = /^(.+)-match-\d+$/;

/** The channel message of a notice, its kind and what it is about named by its id. */
export function channelMessage(noticeId: string, content: string): ChannelMessage {
  return { content, meta: noticeMeta(noticeId) };
}

function noticeMeta(noticeId: string): Record<string, string> {
  const taskId = taskIdOfNotice(noticeId);
  if (taskId !== undefined) return { kind: 'completion', task_id: taskId };
  const batch = MONITOR_BATCH.exec(noticeId);
  if (batch?.[1] !== undefined) return { kind: 'monitor', task_id: batch[1] };
  if (noticeId.startsWith(REMINDER_PREFIX)) return { kind: 'reminder', reminder_id: noticeId };
  if (noticeId.startsWith(APPROVAL_PREFIX)) return { kind: 'approval', approval_id: noticeId };
  return { kind: 'notice' };
}
