import type { Client } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import { BashTasks, type BashTasksOptions } from '../client/bash-tasks.js';
import { createBashTool } from './bash.js';
import { createBashKillTool } from './bash-kill.js';
import { createBashOutputTool } from './bash-output.js';
import type { Tool } from './types.js';

export interface BashToolsOptions {
  /** A connected Temporal client. */
  client: Client;
  /** @default the client's namespace */
  namespace?: string;
  /** The task queue the command workers serve. @default DEFAULT_TASK_QUEUE ('durable-bash') */
  taskQueue?: string;
  /**
   * The task queue this agent host's worker serves (see `createAgentWorker`); background tasks of a
   * session then end with a completion notice in it. @default no notices
   */
  agentTaskQueue?: string;
  /** How long a completion notice waits for the agent worker. @default DEFAULT_NOTICE_WINDOW_MS (1 hour) */
  noticeWindowMs?: number;
  /** How each task's `bash_output` reader workflow runs. @default READER_CLAIMS_PER_RUN claims a run, READER_IDLE_MS */
  reader?: BashTasksOptions['reader'];
}

/** The model-facing tools, each run a Temporal workflow on the given namespace and task queue. */
export function createBashTools(options: BashToolsOptions): Tool[] {
  const client =
    options.namespace === undefined || options.namespace === options.client.options.namespace
      ? options.client
      : new TemporalClient({ ...options.client.options, namespace: options.namespace });
  const tasks = new BashTasks({
    client,
    ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
    ...(options.agentTaskQueue !== undefined ? { agentTaskQueue: options.agentTaskQueue } : {}),
    ...(options.noticeWindowMs !== undefined ? { noticeWindowMs: options.noticeWindowMs } : {}),
    ...(options.reader !== undefined ? { reader: options.reader } : {}),
  });
  return [
    createBashTool(tasks) as Tool,
    createBashOutputTool(tasks) as Tool,
    createBashKillTool(tasks) as Tool,
  ];
}
