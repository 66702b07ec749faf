import type { Client } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import { BashTasks } from '../client/bash-tasks.js';
import { createBashTool } from './bash.js';
import { createBashKillTool } from './bash-kill.js';
import type { Tool } from './types.js';

export interface BashToolsOptions {
  /** A connected Temporal client. */
  client: Client;
  /** @default the client's namespace */
  namespace?: string;
  /** The task queue the command workers serve. @default DEFAULT_TASK_QUEUE ('durable-bash') */
  taskQueue?: string;
}

/** The model-facing tools, each run a Temporal workflow on the given namespace and task queue. */
export function createBashTools(options: BashToolsOptions): Tool[] {
  const client =
    options.namespace === undefined || options.namespace === options.client.options.namespace
      ? options.client
      : new TemporalClient({ ...options.client.options, namespace: options.namespace });
  const tasks = new BashTasks({ client, ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}) });
  return [createBashTool(tasks) as Tool, createBashKillTool(tasks) as Tool];
}
