/**
 * The Streamable HTTP transport: one MCP server object per MCP session, loopback by default, and
 * every request's Host (and Origin, when sent) checked against the names the server answers to, so
 * a web page cannot reach it through DNS rebinding.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** The path the MCP endpoint is served on. */
export const MCP_HTTP_PATH = '/mcp';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface HttpListen {
  host: string;
  port: number;
}

export interface McpHttpServer {
  /** The URL clients connect to. */
  url: string;
  close(): Promise<void>;
}

/** Serves MCP over Streamable HTTP; `newServer` makes the server object of each new MCP session. */
export async function serveMcpHttp(listen: HttpListen, newServer: () => McpServer): Promise<McpHttpServer> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const allowedNames = new Set([...LOOPBACK_NAMES, listen.host]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const refusal = refusedHeader(req, allowedNames);
    if (refusal !== undefined) return reply(res, 403, refusal);
    if (new URL(req.url ?? '/', 'http://host').pathname !== MCP_HTTP_PATH)
      return reply(res, 404, `not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (session === undefined) return reply(res, 404, `unknown MCP session ${sessionId}`);
      return session.transport.handleRequest(req, res);
    }
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialize request: the transport refused it, and this server object serves no one.
    if (transport.sessionId === undefined) await server.close();
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, err instanceof Error ? err.message : String(err));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(listen.port, listen.host.replace(/^\[|\]$/g, ''), () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${listen.host}:${port}${MCP_HTTP_PATH}`,
    async close() {
      await Promise.allSettled([...sessions.values()].map(({ server }) => server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Why a request's Host or Origin is refused, or undefined when both name this server. */
function refusedHeader(req: IncomingMessage, allowed: ReadonlySet<string>): string | undefined {
  const host = hostname(`http://${req.headers.host ?? ''}`);
  if (host === undefined || !allowed.has(host)) return `Invalid Host header: ${req.headers.host ?? '(none)'}`;
  const origin = req.headers.origin;
  if (origin !== undefined && !allowed.has(hostname(origin) ?? '')) return `Invalid Origin header: ${origin}`;
  return undefined;
}

function hostname(url: string): string | undefined {
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
