/**
 * A running MCP server (`durable-bash mcp`): the tools for one agent session, an agent worker that
 * receives the session's completion notices, and the MCP transport (stdio, or Streamable HTTP).
 */

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { startAgentHost } from '../agent-host/agent-host.js';
import { sessionAgentTaskQueue } from '../agent-host/names.js';
import { BashTasks } from '../client/bash-tasks.js';
import type { PermissionPolicy } from '../policy/policy-types.js';
import { MCP_MAX_WAIT_MS } from '../shared/limits.js';
import type { BashArgumentsShape } from '../tools/claude-code-bash-arguments.js';
import { compileMcpHttpOptions, type McpHttpOptions, type McpHttpServer, serveMcpHttp } from './http.js';
import { McpNotices } from './mcp-notices.js';
import { McpTasks } from './mcp-tasks.js';
import { NoticeStore } from './notice-store.js';
import { createMcpServer, type McpSession } from './server.js';

export interface McpServerOptions extends McpSession {
  client: Client;
  /** For the agent worker; the same server, namespace and data converter as `client`. */
  connection: NativeConnection;
  /** The task queue the command workers serve. */
  taskQueue: string;
  /** Where the session's notice file lives (`<stateDir>/mcp-notices/`). */
  stateDir: string;
  /** @default DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS; undefined turns it off */
  autoBackgroundAfterMs: number | undefined;
  /**
   * Streamable HTTP on this address, for the holders of its token (or, on loopback, anyone), with
   * its sessions capped and expired when idle; absent: stdio.
   */
  http?: McpHttpOptions;
  /**
   * The arguments `bash` takes: durable-bash's own, or Claude Code's Bash's (`'claude-code'`), for a
   * Claude Code host whose Bash is routed here. @default 'durable-bash'
   */
  bashArguments?: BashArgumentsShape;
  /** The version the server reports in the MCP handshake. */
  version: string;
  /**
   * Decides each `bash` call. An `ask` waits in a durable approval request, which the MCP client
   * is asked about by elicitation when it supports it. @default every call is allowed
   */
  policy?: PermissionPolicy;
  /**
   * Deliver notices as Claude Code channel messages (`notifications/claude/channel`), each of which
   * starts a turn of an idle session, and no other way; the server declares the `claude/channel`
   * capability. Only for a client that takes channels: one that does not drops them unseen. Stdio
   * only: over Streamable HTTP a message with no stream open to take it would be lost.
   * @default false: logging notifications and lines atop tool results
   */
  channel?: boolean;
}

export interface RunningMcpServer {
  /** The Streamable HTTP URL, when serving HTTP. */
  url?: string;
  /** Resolves when the host stops: stdin closed (stdio), or `close` called. */
  done: Promise<void>;
  close(): Promise<void>;
}

/** Starts the agent host (tools and agent worker) and the transport; `close` (or stdin ending, on stdio) stops both. */
export async function startMcpServer(options: McpServerOptions): Promise<RunningMcpServer> {
  // Checked first: options that cannot be start nothing.
  const httpOptions = options.http === undefined ? undefined : compileMcpHttpOptions(options.http);
  if (options.channel === true && httpOptions !== undefined)
    throw new RangeError('channel: channel messages go over stdio only, not with http');
  const session: McpSession = { sessionId: options.sessionId, cwd: options.cwd };
  // MCP tasks read and kill through a client of their own settings: the same server and queue.
  const bashTasks = new BashTasks({ client: options.client, taskQueue: options.taskQueue });
  const tasks = new McpTasks(bashTasks, session);
  const channel = options.channel === true;
  const notices = new McpNotices(options.sessionId, new NoticeStore(options.stateDir, options.sessionId), {
    tasks,
    channel,
    // A notice that showed a task's output is its read: `bash_output` goes on after it.
    claimOutput: (taskId) => bashTasks.read(taskId, options.sessionId),
    onChannelGivenUp: (afterMs) =>
      process.stderr.write(
        `durable-bash: the client connected ${afterMs} ms after this server started, too late for Claude Code to take its channel in this turn: notices go atop tool results instead\n`,
      ),
  });
  const host = await startAgentHost({
    client: options.client,
    connection: options.connection,
    taskQueue: options.taskQueue,
    agentTaskQueue: sessionAgentTaskQueue(options.sessionId),
    sessions: notices,
    tools: {
      maxWaitMs: MCP_MAX_WAIT_MS,
      ...(options.bashArguments !== undefined ? { bashArguments: options.bashArguments } : {}),
      ...(options.policy !== undefined ? { policy: options.policy } : {}),
      ...(options.autoBackgroundAfterMs !== undefined
        ? { autoBackgroundAfterMs: options.autoBackgroundAfterMs }
        : {}),
    },
  });
  const newServer = () => createMcpServer(host.tools, session, notices, tasks, options.version, { channel });

  let http: McpHttpServer | undefined;
  let closeTransport: () => Promise<void>;
  let ended: Promise<void>;
  if (httpOptions !== undefined) {
    http = await serveMcpHttp(httpOptions, newServer);
    closeTransport = http.close;
    ended = host.running;
  } else {
    const server = newServer();
    await server.connect(new StdioServerTransport());
    closeTransport = () => server.close();
    ended = Promise.race([host.running, new Promise<void>((resolve) => process.stdin.once('end', resolve))]);
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await closeTransport();
      await host.close();
      await host.running;
    })();
    return closing;
  };
  return { ...(http ? { url: http.url } : {}), done: ended.then(close), close };
}
