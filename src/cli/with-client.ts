import type { Client } from '@temporalio/client';
import { BashTasks } from '../client/bash-tasks.js';
import { connectClient } from '../connection/connect.js';
import { type CodecFlags, codecDataConverter } from './codec-options.js';
import { connectionTarget, type ServerOptions } from './options.js';

/** Connects to the server the flags name, runs `fn`, and closes the connection whatever happens. */
export async function withClient<T>(
  flags: ServerOptions & CodecFlags,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  const client = await connectClient(connectionTarget(flags), codecDataConverter(flags));
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}

/** `withClient`, with the task operations the tools use. */
export function withTasks<T>(
  flags: ServerOptions & CodecFlags,
  fn: (tasks: BashTasks) => Promise<T>,
): Promise<T> {
  return withClient(flags, (client) => fn(new BashTasks({ client, taskQueue: flags.taskQueue })));
}
