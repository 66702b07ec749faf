/**
 * An agent host, the one assembly every entry point that serves a model uses (the MCP server, the
 * harness plugin): the tools, over a client, and an agent worker on the host's own task queue that
 * delivers the sessions' completion notices. The worker's connection shares the client's server,
 * namespace and data converter, so an encrypted fleet's notices decrypt here too.
 */
import type { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { AgentSessions } from '../shared/notice.js';
import type { Tool } from '../shared/tool-types.js';
import { type BashToolsOptions, createBashTools } from '../tools/create-bash-tools.js';
import { type AgentWorkerOptions, createAgentWorker } from '../worker/agent-worker.js';
import { dropRepeatedNotices } from './repeated-notices.js';

export interface AgentHostOptions {
  /** The tools' client; its namespace and data converter are the agent worker's too. */
  client: Client;
  /** The agent worker's connection, to the client's server. */
  connection: NativeConnection;
  /** The task queue the command workers serve. */
  taskQueue: string;
  /** This host's own queue: keep it across restarts, so notices due meanwhile arrive when it is back. */
  agentTaskQueue: string;
  /** Where notices go. A repeat of a delivered notice is dropped before it gets there. */
  sessions: AgentSessions;
  /** The rest of `createBashTools`' options. */
  tools?: Omit<BashToolsOptions, 'client' | 'taskQueue' | 'agentTaskQueue'>;
  /** Told of each notice the sessions took, once (see `AgentWorkerOptions.onNotice`). @default none */
  onNotice?: AgentWorkerOptions['onNotice'];
}

export interface AgentHost {
  tools: Tool[];
  /** Settles when the agent worker stops (rejects if it failed). */
  running: Promise<void>;
  /** Stops the agent worker and waits for it; the connections stay the caller's. */
  close(): Promise<void>;
}

/** Makes the tools and starts the agent worker. */
export async function startAgentHost(options: AgentHostOptions): Promise<AgentHost> {
  const { client } = options;
  const tools = createBashTools({
    ...options.tools,
    client,
    taskQueue: options.taskQueue,
    agentTaskQueue: options.agentTaskQueue,
  });
  const worker: Worker = await createAgentWorker({
    connection: options.connection,
    namespace: client.options.namespace,
    taskQueue: options.agentTaskQueue,
    agents: dropRepeatedNotices(options.sessions),
    ...(options.onNotice ? { onNotice: options.onNotice } : {}),
    dataConverter: client.options.dataConverter,
  });
  const running = worker.run();
  let closing: Promise<void> | undefined;
  return {
    tools,
    running,
    close() {
      closing ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
      })();
      return closing;
    },
  };
}
