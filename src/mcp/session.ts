/** The agent session an MCP server acts as, and the names derived from it. */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/** The variable that names the session when `--session` is not given. */
export const SESSION_ENV = 'DURABLE_BASH_SESSION';

/**
 * The session an MCP server acts as when none is named: `mcp:<user>@<host>:<cwd>`. The same for a
 * user on a host in a directory across restarts, so a restarted server (or a new client) sees,
 * reads and kills what the old one started. A user with no passwd entry is named by uid.
 */
export function defaultSessionId(cwd: string): string {
  return `mcp:${userName()}@${os.hostname()}:${path.resolve(cwd)}`;
}

/**
 * The task queue the session's completion notices wait on: one per session, so a restarted MCP
 * server polls the same queue and receives the notices that fell due while it was down.
 */
export function noticeTaskQueue(sessionId: string): string {
  return `durable-bash-mcp@${sessionDigest(sessionId)}`;
}

/** A short, file-name-safe digest of the session id (for the notice queue and the notice file). */
export function sessionDigest(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
}

function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}
