/**
 * `durable-bash mcp --http`'s flags made into the server's options before anything starts (the token,
 * printed with how to send it at the start that made it; the sessions' limits), and the lines the
 * server says at start about what it lets in.
 */
import type { McpHttpOptions } from '../mcp/http.js';
import { isLoopbackHost } from '../mcp/http-hosts.js';
import { mcpHttpToken } from './mcp-http-token.js';
import type { McpFlags } from './mcp-options.js';

/** The flags that apply only with --http, as they are named. */
const HTTP_ONLY_FLAGS = {
  httpTokenFile: '--http-token-file',
  httpNoAuth: '--http-no-auth',
  httpMaxSessions: '--http-max-sessions',
  httpSessionIdleMs: '--http-session-idle-ms',
} as const;

/**
 * The HTTP server's options, checked before anything starts: who may use it (the token, printed
 * with how to send it at the start that made it), and its sessions' limits.
 */
export function httpOptions(flags: McpFlags): McpHttpOptions | undefined {
  if (flags.http === undefined) {
    const given = Object.entries(HTTP_ONLY_FLAGS).find(([key]) => flags[key as keyof typeof HTTP_ONLY_FLAGS]);
    if (given !== undefined) throw new Error(`${given[1]} applies only with --http`);
    return undefined;
  }
  const limits = {
    ...(flags.httpMaxSessions !== undefined ? { maxSessions: flags.httpMaxSessions } : {}),
    ...(flags.httpSessionIdleMs !== undefined ? { sessionIdleMs: flags.httpSessionIdleMs } : {}),
  };
  if (flags.httpNoAuth) {
    if (!isLoopbackHost(flags.http.host))
      throw new Error(
        `--http-no-auth is only for a loopback address (127.0.0.1, [::1], localhost), got ${flags.http.host}`,
      );
    return { ...flags.http, auth: { kind: 'none' }, ...limits };
  }
  const { token, made } = mcpHttpToken(flags);
  if (made !== undefined)
    process.stderr.write(
      `durable-bash: made a token for MCP over HTTP, kept in ${made} (mode 0600) for later starts\n` +
        `durable-bash: every client must send the header Authorization: Bearer ${token}\n`,
    );
  return { ...flags.http, auth: { kind: 'bearer', token }, ...limits };
}

/** What a listener lets in beyond a token's holders on this machine: a line for each, or nothing. */
export function httpWarnings(http: McpHttpOptions, url: string, sessionId: string): string {
  if (http.auth.kind === 'none')
    return `durable-bash: --http-no-auth: any process of any user on this machine can use this server as session ${sessionId}: run commands, read its tasks, answer its approvals\n`;
  if (isLoopbackHost(http.host)) return '';
  return `durable-bash: warning: plain HTTP on ${url} reaches beyond this machine: the token and every call cross the network readable unless TLS is in front (a reverse proxy)\n`;
}
