/** The agent session an MCP server acts as, and the names derived from it. */
import os from 'node:os';
import path from 'node:path';
import { userName } from '../agent-host/names.js';

export { sessionAgentTaskQueue as noticeTaskQueue, sessionDigest } from '../agent-host/names.js';

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
