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

/**
 * How long after a connection's first `tools/list` its notices start to go out as channel messages,
 * unless a `tools/call` comes first. Claude Code 2.1.328 registers its channel handler as a turn
 * starts, for the servers connected then (and at once after a reconnect), and drops, without a word,
 * a message that comes before. A server it waits for before the first turn (`alwaysLoad`) is listed,
 * then registered as that turn starts: 10 to 150 ms later, measured unloaded. A `tools/call` comes
 * in a turn, after its start.
 */
export const CHANNEL_SETTLE_MS = 3_000;

/**
 * How soon after this process started Claude Code's first connection must have initialized for the
 * channel to be trusted. Claude Code 2.1.328 registers channels when a turn starts, for the servers
 * connected then; before its first turn it waits for an `alwaysLoad` server 5 s from when it began
 * to connect (just before this process started), then goes on without it ("alwaysLoad servers: 1/1
 * not ready after 5000ms — proceeding"), and a server that connects after that turn started is not
 * registered until a later one. Measured: a server that answered after 12 s got no channel.
 */
export const CHANNEL_CONNECT_DEADLINE_MS = 5_000;

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
