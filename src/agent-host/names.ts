/** The names an agent host goes by: its user, and the task queues its completion notices wait on. */
import { createHash } from 'node:crypto';
import os from 'node:os';

/** This process's user name; a user with no passwd entry is named by uid. */
export function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

/** An agent host's own notice queue when it names none (the harness plugin): one per host name. */
export function hostAgentTaskQueue(hostname = os.hostname()): string {
  return `durable-bash-agent@${hostname}`;
}

/**
 * One session's notice queue (the MCP server, which serves one session): a restarted server polls
 * the same queue and receives the notices that fell due while it was down.
 */
export function sessionAgentTaskQueue(sessionId: string): string {
  return `durable-bash-mcp@${sessionDigest(sessionId)}`;
}

/** A short, file-name-safe digest of a session id (for its notice queue and its notice file). */
export function sessionDigest(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
}
