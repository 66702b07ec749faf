import type { TaskFilter } from '../client/task-list.js';
import { taskTable } from '../tools/task-table.js';
import type { ServerOptions } from './options.js';
import { withTasks } from './with-client.js';

export interface PsFlags extends ServerOptions {
  owner: string;
  all?: boolean;
  query?: boolean;
}

/** `durable-bash ps`: a table of one owner's tasks (or every task), running ones first, then by end time. */
export async function runPs(flags: PsFlags): Promise<void> {
  const filter: TaskFilter = flags.all ? { all: true } : { owner: flags.owner };
  if (flags.query) {
    // The query for the Web UI's filter box (computed here; nothing is listed).
    const query = await withTasks(flags, async (client) => client.listQuery(filter));
    process.stdout.write(`${query}\n`);
    return;
  }
  const tasks = await withTasks(flags, (client) => client.list(filter));
  process.stdout.write(`${taskTable(tasks, new Date())}\n`);
}
