/**
 * The Streamable HTTP transport: one MCP server object per MCP session, loopback by default. Each
 * request is checked in turn: the endpoint's path (404), the token (401, http-auth.ts), the Host and
 * Origin against DNS rebinding (403, http-hosts.ts), then its session (404 once ended or expired,
 * 503 for a new one past the cap, http-sessions.ts). A refused request reaches no MCP server object.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { DEFAULT_MCP_HTTP_MAX_SESSIONS, DEFAULT_MCP_HTTP_SESSION_IDLE_MS } from '../shared/limits.js';
import { checkBearerToken, type McpHttpAuth, requestAuthorization } from './http-auth.js';
import { hostCheck, isLoopbackHost } from './http-hosts.js';
import { HttpSessions, type SessionLimits } from './http-sessions.js';

/** The path the MCP endpoint is served on. */
export const MCP_HTTP_PATH = '/mcp';

/** JSON-RPC's "server error" code, as the SDK's transport answers refused requests. */
const REFUSED_CODE = -32000;
/** The code the SDK's transport gives an unknown session's 404. */
const SESSION_NOT_FOUND_CODE = -32001;

export interface HttpListen {
  host: string;
  port: number;
}

export interface McpHttpOptions extends HttpListen {
  /**
   * Who may use the server: the holders of a token, sent as `Authorization: Bearer <token>`; or,
   * on a loopback host only, every process of the machine (`{ kind: 'none' }`).
   */
  auth: McpHttpAuth;
  /** The most MCP sessions held at once; a new one past it gets 503. @default DEFAULT_MCP_HTTP_MAX_SESSIONS */
  maxSessions?: number;
  /** How long a session with no request open lives before it is ended. @default DEFAULT_MCP_HTTP_SESSION_IDLE_MS */
  sessionIdleMs?: number;
}

/** The options checked, with their defaults. */
export interface CompiledMcpHttpOptions extends HttpListen {
  auth: McpHttpAuth;
  limits: SessionLimits;
}

export interface McpHttpServer {
  /** The URL clients connect to. */
  url: string;
  close(): Promise<void>;
}

/** Checks the options and fills their defaults; throws, naming the option, on one that cannot be. */
export function compileMcpHttpOptions(options: McpHttpOptions): CompiledMcpHttpOptions {
  if (options.auth.kind === 'none' && !isLoopbackHost(options.host))
    throw new Error(
      `invalid http.auth: no token is allowed only on a loopback host (127.0.0.1, [::1], localhost), got ${options.host}`,
    );
  const limits = {
    maxSessions: positiveInteger('http.maxSessions', options.maxSessions ?? DEFAULT_MCP_HTTP_MAX_SESSIONS),
    idleMs: positiveInteger('http.sessionIdleMs', options.sessionIdleMs ?? DEFAULT_MCP_HTTP_SESSION_IDLE_MS),
  };
  if (options.auth.kind === 'bearer') checkBearerToken(options.auth.token, 'http.auth.token');
  return { host: options.host, port: options.port, auth: options.auth, limits };
}

/** Serves MCP over Streamable HTTP; `newServer` makes the server object of each new MCP session. */
export async function serveMcpHttp(
  options: CompiledMcpHttpOptions,
  newServer: () => McpServer,
): Promise<McpHttpServer> {
  const unauthorized = requestAuthorization(options.auth);
  const refusedHost = hostCheck(options.host);
  const sessions = new HttpSessions(options.limits);
  const { maxSessions, idleMs } = options.limits;

  /**
   * Serves a request that names no session, in the place reserved for it: an initialize makes a
   * session there; anything else is refused by the transport, and the place given back.
   */
  const startSession = async (req: IncomingMessage, res: ServerResponse) => {
    const server = newServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => sessions.add(id, { server, transport }, res),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.remove(transport.sessionId);
    };
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } finally {
      // No session made (not an initialize, or it failed): this server object serves no one.
      if (transport.sessionId === undefined) {
        sessions.release();
        await server.close();
      }
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://host').pathname !== MCP_HTTP_PATH)
      return reply(res, 404, REFUSED_CODE, `not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    const denied = unauthorized(req);
    if (denied !== undefined) {
      res.setHeader('WWW-Authenticate', denied.challenge);
      return reply(res, 401, REFUSED_CODE, denied.message);
    }
    const refusal = refusedHost(req);
    if (refusal !== undefined) return reply(res, 403, REFUSED_CODE, refusal);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const handled = sessions.handle(sessionId, req, res);
      if (handled !== false) return handled;
      return reply(
        res,
        404,
        SESSION_NOT_FOUND_CODE,
        `unknown MCP session ${sessionId}: it was ended, or expired after ${idleMs} ms with no request; initialize a new one`,
      );
    }
    if (!sessions.reserve())
      return reply(
        res,
        503,
        REFUSED_CODE,
        `too many MCP sessions: this server holds at most ${maxSessions}; one ends when its client ends it (DELETE) or after ${idleMs} ms with no request`,
      );
    await startSession(req, res);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, REFUSED_CODE, err instanceof Error ? err.message : String(err));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host.replace(/^\[|\]$/g, ''), () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}${MCP_HTTP_PATH}`,
    async close() {
      await sessions.closeAll();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`invalid ${name}: expected a positive integer, got ${value}`);
  return value;
}

function reply(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
