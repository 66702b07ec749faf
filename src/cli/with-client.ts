import type { Client } from '@temporalio/client';
import { BashTasks } from '../client/bash-tasks.js';
import { connectClient } from '../client/connect.js';
import type { ServerOptions } from './options.js';

/** Connects to the server the flags name, runs `fn`, and closes the connection whatever happens. */
export async function withClient<T>(flags: ServerOptions, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient({ address: flags.address, namespace: flags.namespace });
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}

/** `withClient`, with the task operations the tools use. */
export function withTasks<T>(flags: ServerOptions, fn: (tasks: BashTasks) => Promise<T>): Promise<T> {
  return withClient(flags, (client) => fn(new BashTasks({ client, taskQueue: flags.taskQueue })));
}
