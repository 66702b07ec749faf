/**
 * The MCP server's completion notices, kept in a small file per session so they outlive the server.
 * Each notice is recorded before the inject activity succeeds, then goes out at most once as a
 * logging notification and at most once as a line at the top of a tool result (or, to a client
 * that takes channels, once as a channel message): each way is recorded before it is sent, so a
 * restart repeats none.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REMEMBERED_NOTICE_IDS } from '../shared/notice.js';
import { isTaskIdShape } from '../shared/task-id.js';
import { sessionDigest } from './session.js';

/** A task's notice id: its notice workflow's id, as the task's workflow names it (task-end.ts). */
const NOTICE_ID_SUFFIX = '-notice';

export function noticeIdOf(taskId: string): string {
  return `${taskId}${NOTICE_ID_SUFFIX}`;
}

/** The task a notice id is of; undefined for an id of another shape. */
export function taskIdOfNotice(noticeId: string): string | undefined {
  if (!noticeId.endsWith(NOTICE_ID_SUFFIX)) return undefined;
  const taskId = noticeId.slice(0, -NOTICE_ID_SUFFIX.length);
  return isTaskIdShape(taskId) ? taskId : undefined;
}

interface PendingNotice {
  noticeId: string;
  content: string;
  /** Sent as a logging notification to at least one connected client. */
  logged: boolean;
}

interface NoticeFile {
  /** Not yet in a tool result, oldest first. */
  pending: PendingNotice[];
  /** Ids of notices already in a tool result (or settled), newest last. */
  delivered: string[];
}

/** Every operation reads the file afresh and writes it back, so two servers of one session mostly agree. */
export class NoticeStore {
  readonly file: string;

  /** The session's notice file under `stateDir` (`mcp-notices/<session digest>.json`). */
  constructor(stateDir: string, sessionId: string) {
    this.file = path.join(stateDir, 'mcp-notices', `${sessionDigest(sessionId)}.json`);
  }

  /** Records a notice; false when it is already known (pending or delivered), so it is not repeated. */
  record(noticeId: string, content: string): boolean {
    const state = readState(this.file);
    if (state.delivered.includes(noticeId) || state.pending.some((n) => n.noticeId === noticeId))
      return false;
    state.pending.push({ noticeId, content, logged: false });
    this.save(state);
    return true;
  }

  /** The pending notices not yet sent as a logging notification. */
  unlogged(): { noticeId: string; content: string }[] {
    return readState(this.file)
      .pending.filter((n) => !n.logged)
      .map(({ noticeId, content }) => ({ noticeId, content }));
  }

  /** Marks notices as sent (or, after a send that reached no client, as not sent) as a logging notification. */
  setLogged(noticeIds: readonly string[], logged: boolean): void {
    if (noticeIds.length === 0) return;
    const state = readState(this.file);
    for (const notice of state.pending) if (noticeIds.includes(notice.noticeId)) notice.logged = logged;
    this.save(state);
  }

  /** Takes every pending notice for a tool result: they are delivered, and never sent again either way. */
  take(): string[] {
    return this.takeAll().map((n) => n.content);
  }

  /** `take`, with each notice's id. */
  takeAll(): { noticeId: string; content: string }[] {
    const state = readState(this.file);
    if (state.pending.length === 0) return [];
    this.save({
      pending: [],
      delivered: [...state.delivered, ...state.pending.map((n) => n.noticeId)].slice(-REMEMBERED_NOTICE_IDS),
    });
    return state.pending.map(({ noticeId, content }) => ({ noticeId, content }));
  }

  /** The pending notices, oldest first. */
  pending(): { noticeId: string; content: string }[] {
    return readState(this.file).pending.map(({ noticeId, content }) => ({ noticeId, content }));
  }

  /**
   * Takes one pending notice (for a channel message): it is delivered from now on. False when it
   * is no longer pending (taken meanwhile by another server of the session).
   */
  takeOne(noticeId: string): boolean {
    const state = readState(this.file);
    if (!state.pending.some((n) => n.noticeId === noticeId)) return false;
    this.save({
      pending: state.pending.filter((n) => n.noticeId !== noticeId),
      delivered: [...state.delivered, noticeId].slice(-REMEMBERED_NOTICE_IDS),
    });
    return true;
  }

  /** Puts back a notice taken by `takeOne` whose message could not be sent: pending again, first. */
  putBack(notice: { noticeId: string; content: string }): void {
    const state = readState(this.file);
    this.save({
      pending: [{ ...notice, logged: false }, ...state.pending.filter((n) => n.noticeId !== notice.noticeId)],
      delivered: state.delivered.filter((id) => id !== notice.noticeId),
    });
  }

  /**
   * The session has the task's end another way (its MCP task's result): the notice is delivered,
   * pending or not yet arrived, and goes out neither way.
   */
  settle(noticeId: string): void {
    const state = readState(this.file);
    if (state.delivered.includes(noticeId)) return;
    this.save({
      pending: state.pending.filter((n) => n.noticeId !== noticeId),
      delivered: [...state.delivered, noticeId].slice(-REMEMBERED_NOTICE_IDS),
    });
  }

  /** Written to a temporary name and renamed: a reader sees the whole old file or the whole new one. */
  private save(state: NoticeFile): void {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    renameSync(temporary, this.file);
  }
}

function readState(file: string): NoticeFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { pending: [], delivered: [] };
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<NoticeFile>;
  return { pending: parsed.pending ?? [], delivered: parsed.delivered ?? [] };
}
