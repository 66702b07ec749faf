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

/** The variable Claude Code sets for every stdio MCP server it starts: its conversation's id. */
export const CLAUDE_CODE_SESSION_ENV = 'CLAUDE_CODE_SESSION_ID';

/** The prefix of a session that follows a Claude Code conversation. */
export const CLAUDE_CODE_SESSION_PREFIX = 'claude-code:';

/** A UUID, as Claude Code's session ids are (any version, any case). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The session of a server Claude Code started: `claude-code:<conversation id>` from
 * CLAUDE_CODE_SESSION_ID, the same across `--resume` in a new process, new for a fork or a new
 * conversation. Undefined when the variable is unset, and, with a line saying why, when it is not a
 * UUID (then the server takes its default session, as without it).
 */
export function claudeCodeSessionId(
  env: NodeJS.ProcessEnv,
): { sessionId: string } | { ignored: string } | undefined {
  const id = env[CLAUDE_CODE_SESSION_ENV];
  if (id === undefined || id === '') return undefined;
  if (!UUID.test(id))
    return {
      ignored: `ignoring ${CLAUDE_CODE_SESSION_ENV}=${JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id)}: expected a UUID, as Claude Code sets it`,
    };
  return { sessionId: `${CLAUDE_CODE_SESSION_PREFIX}${id.toLowerCase()}` };
}
