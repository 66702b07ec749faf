/** `durable-bash mcp` processes (the built bin) and the MCP SDK's own client on them, over stdio or HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitResult,
  LoggingMessageNotificationSchema,
  type Task,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach } from 'vitest';
import { MCP_TOKEN_ENV, MCP_TOKEN_FILE_NAME } from '../../src/cli/mcp-http-token.js';
import { CLI_BIN } from './cli.js';

/** Where a file's MCP servers reach Temporal, and where they keep their state. */
export interface McpServerPlace {
  address: string;
  taskQueue: string;
  stateDir: string;
}

export interface McpConnection {
  client: Client;
  /** The data of every logging notification received, in order. */
  logs: unknown[];
  /** Every `notifications/tasks/status` received, in order. */
  statuses: Task[];
  /** The params of every Claude Code channel message (`notifications/claude/channel`) received, in order. */
  channel: Array<{ content: string; meta?: Record<string, string> }>;
  /** SIGKILLs the MCP server process. */
  kill(): void;
}

export type McpTransportKind = 'stdio' | 'http';

/** A `durable-bash mcp --http` process that listens. */
export interface McpHttpProcess {
  child: ChildProcess;
  url: string;
  /** The token its clients send: the one it was given, else the one kept in its state dir; none with --http-no-auth. */
  token: string | undefined;
  /** Everything it printed on stderr so far. */
  stderr(): string;
}

/** A client's answer to a server's form elicitation. */
export type ElicitHandler = (params: ElicitRequestFormParams) => Promise<ElicitResult>;

export interface McpServers {
  /**
   * A `durable-bash mcp` process over stdio, and a client connected to it; with `elicit`, a client
   * that declares form elicitation and answers each `elicitation/create` with it.
   */
  stdio(
    session: string,
    extra?: string[],
    elicit?: ElicitHandler,
    options?: { env?: Record<string, string>; clientName?: string },
  ): Promise<McpConnection & { stderr(): string }>;
  /**
   * A `durable-bash mcp --http 127.0.0.1:0` process (`extra` may give another `--http`), with `env`
   * over this process's environment; resolves once it listens. Without a token given
   * (`--http-token-file`, DURABLE_BASH_MCP_TOKEN), it uses the one kept in the state dir, as a user's does.
   */
  startHttp(session: string, extra?: string[], env?: NodeJS.ProcessEnv): Promise<McpHttpProcess>;
  /**
   * A client on an HTTP server, sending its token (each client is an MCP session of its own);
   * `kill` ends that server.
   */
  http(
    server: Pick<McpHttpProcess, 'url' | 'token'>,
    kill?: () => void,
  ): Promise<McpConnection & { transport: StreamableHTTPClientTransport }>;
  /** A fresh `durable-bash mcp` process for `session` over `kind`, and a client connected to it. */
  connect(kind: McpTransportKind, session: string, extra?: string[]): Promise<McpConnection>;
}

/**
 * MCP servers and clients for the calling file, on `place()` (read as each server starts). After
 * each test every client is closed and every server process it started is SIGKILLed.
 */
export function useMcpServers(place: () => McpServerPlace): McpServers {
  const connections: McpConnection[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    const open = connections.splice(0);
    await Promise.all(open.map(({ client }) => client.close().catch(() => undefined)));
    for (const { kill } of open) kill();
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  const args = (session: string, extra: string[]) => {
    const { address, taskQueue, stateDir } = place();
    return [
      CLI_BIN,
      'mcp',
      '--address',
      address,
      '--task-queue',
      taskQueue,
      '--session',
      session,
      '--state-dir',
      stateDir,
      ...extra,
    ];
  };

  const servers: McpServers = {
    async stdio(session, extra = [], elicit, options = {}) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: args(session, extra),
        env: { ...getDefaultEnvironment(), ...options.env },
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const connection = {
        ...(await connectClient(transport, elicit, options.clientName)),
        stderr: () => stderr,
        kill() {
          const pid = transport.pid;
          if (pid !== null) killQuietly(pid);
        },
      };
      if (transport.pid === null) throw new Error('no MCP server process');
      connections.push(connection);
      return connection;
    },

    async startHttp(session, extra = [], env = {}) {
      const listen = extra.includes('--http') ? [] : ['--http', '127.0.0.1:0'];
      const child = spawn(process.execPath, args(session, [...listen, ...extra]), {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, ...env },
      });
      children.push(child);
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          // The whole start line: a chunk may end in the middle of it, and of its URL.
          const match = /: MCP server for session .* on (http:\/\/\S+) \(.*\)\n/.exec(stderr);
          if (match?.[1]) resolve(match[1]);
        });
        child.once('exit', () => reject(new Error(`mcp --http exited: ${stderr}`)));
      });
      return { child, url, token: tokenOf(extra, env, place().stateDir), stderr: () => stderr };
    },

    async http(server, kill = () => undefined) {
      const transport = new StreamableHTTPClientTransport(
        new URL(server.url),
        server.token === undefined
          ? undefined
          : { requestInit: { headers: { authorization: `Bearer ${server.token}` } } },
      );
      const connection = { ...(await connectClient(transport)), kill, transport };
      connections.push(connection);
      return connection;
    },

    async connect(kind, session, extra = []) {
      if (kind === 'stdio') return servers.stdio(session, extra);
      const server = await servers.startHttp(session, extra);
      return servers.http(server, () => server.child.kill('SIGKILL'));
    },
  };
  return servers;
}

/** The token a server started with `extra` and `env` asks for, as the server resolves it. */
function tokenOf(extra: string[], env: NodeJS.ProcessEnv, stateDir: string): string | undefined {
  if (extra.includes('--http-no-auth')) return undefined;
  const fileFlag = extra.indexOf('--http-token-file');
  const file = fileFlag >= 0 ? extra[fileFlag + 1] : undefined;
  if (file !== undefined) return readFileSync(file, 'utf8').trim();
  const fromEnv = env[MCP_TOKEN_ENV] ?? process.env[MCP_TOKEN_ENV];
  if (fromEnv !== undefined) return fromEnv.trim();
  return readFileSync(path.join(stateDir, MCP_TOKEN_FILE_NAME), 'utf8').trim();
}

/** A client connected over `transport` that records the logging and task status notifications it receives. */
async function connectClient(
  transport: Transport,
  elicit?: ElicitHandler,
  name = 'durable-bash-test',
): Promise<Omit<McpConnection, 'kill'>> {
  const client = new Client(
    { name, version: '0.0.0' },
    elicit === undefined ? {} : { capabilities: { elicitation: { form: {} } } },
  );
  if (elicit !== undefined)
    client.setRequestHandler(ElicitRequestSchema, (request) =>
      elicit(request.params as ElicitRequestFormParams),
    );
  const logs: unknown[] = [];
  const statuses: Task[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params.data);
  });
  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
    statuses.push(notification.params);
  });
  const channel: McpConnection['channel'] = [];
  client.fallbackNotificationHandler = async (notification) => {
    if (notification.method === 'notifications/claude/channel')
      channel.push(notification.params as McpConnection['channel'][number]);
  };
  await client.connect(transport);
  return { client, logs, statuses, channel };
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** An HTTP answer, whole. */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request to an MCP HTTP endpoint as any process could send it: node:http, which lets it set
 * any header (Host included), JSON `body` with the Accept a Streamable HTTP client sends. Resolves
 * with the whole answer, so not for an event stream that stays open.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: options.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.once('error', reject);
    request.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

/** An `initialize` request, as a client's first. */
export const INITIALIZE_REQUEST = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

/** A `tools/call` of `name` with `args`. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of each block of an MCP tool result (a due notice comes first, in a block of its own). */
export const textsOf = (result: unknown): string[] =>
  (result as CallToolResult).content.map((block) => (block as { text: string }).text);

/** An MCP tool result's blocks' texts, one a line. */
export const textOf = (result: unknown): string => textsOf(result).join('\n');
