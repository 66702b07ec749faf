/** `durable-bash mcp` processes (the built bin) and the MCP SDK's own client on them, over stdio or HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';
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
  /** SIGKILLs the MCP server process. */
  kill(): void;
}

export type McpTransportKind = 'stdio' | 'http';

/** A client's answer to a server's form elicitation. */
export type ElicitHandler = (params: ElicitRequestFormParams) => Promise<ElicitResult>;

export interface McpServers {
  /**
   * A `durable-bash mcp` process over stdio, and a client connected to it; with `elicit`, a client
   * that declares form elicitation and answers each `elicitation/create` with it.
   */
  stdio(session: string, extra?: string[], elicit?: ElicitHandler): Promise<McpConnection>;
  /** A `durable-bash mcp --http 127.0.0.1:0` process; resolves with its URL once it listens. */
  startHttp(session: string, extra?: string[]): Promise<{ child: ChildProcess; url: string }>;
  /** A client on an HTTP server's URL (each is an MCP session of its own); `kill` ends that server. */
  http(url: string, kill?: () => void): Promise<McpConnection & { transport: StreamableHTTPClientTransport }>;
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
    async stdio(session, extra = [], elicit) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: args(session, extra),
        env: getDefaultEnvironment(),
        stderr: 'pipe',
      });
      const connection = {
        ...(await connectClient(transport, elicit)),
        kill() {
          const pid = transport.pid;
          if (pid !== null) killQuietly(pid);
        },
      };
      if (transport.pid === null) throw new Error('no MCP server process');
      connections.push(connection);
      return connection;
    },

    async startHttp(session, extra = []) {
      const child = spawn(process.execPath, args(session, ['--http', '127.0.0.1:0', ...extra]), {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = / on (http:\/\/\S+)/.exec(stderr);
          if (match?.[1]) resolve(match[1]);
        });
        child.once('exit', () => reject(new Error(`mcp --http exited: ${stderr}`)));
      });
      return { child, url };
    },

    async http(url, kill = () => undefined) {
      const transport = new StreamableHTTPClientTransport(new URL(url));
      const connection = { ...(await connectClient(transport)), kill, transport };
      connections.push(connection);
      return connection;
    },

    async connect(kind, session, extra = []) {
      if (kind === 'stdio') return servers.stdio(session, extra);
      const { child, url } = await servers.startHttp(session, extra);
      return servers.http(url, () => child.kill('SIGKILL'));
    },
  };
  return servers;
}

/** A client connected over `transport` that records the logging and task status notifications it receives. */
async function connectClient(
  transport: Transport,
  elicit?: ElicitHandler,
): Promise<Omit<McpConnection, 'kill'>> {
  const client = new Client(
    { name: 'durable-bash-test', version: '0.0.0' },
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
  await client.connect(transport);
  return { client, logs, statuses };
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

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
