import { type TaskFilter, taskListQuery } from '../client/task-list.js';
import { loadKeyring } from '../codec/keyring.js';
import { OwnerHasher } from '../codec/owner-hash.js';
import { taskTable } from '../tools/task-table.js';
import type { CodecFlags } from './codec-options.js';
import type { ServerOptions } from './options.js';
import { withTasks } from './with-client.js';

export interface PsFlags extends ServerOptions, CodecFlags {
  owner: string;
  all?: boolean;
  query?: boolean;
}

/**
 * `durable-bash ps`: a table of one owner's tasks (or every task), running ones first, then by end
 * time; commands in the shown form, so none reaches the terminal as a control.
 */
export async function runPs(flags: PsFlags): Promise<void> {
  const filter: TaskFilter = flags.all ? { all: true } : { owner: flags.owner };
  if (flags.query) {
    // The query for the Web UI's filter box: computed from the keys alone, with no connection.
    const keyring = loadKeyring({ keyFile: flags.codecKeyFile });
    process.stdout.write(`${taskListQuery(filter, keyring && new OwnerHasher(keyring))}\n`);
    return;
  }
  const tasks = await withTasks(flags, (client) => client.list(filter));
  process.stdout.write(`${taskTable(tasks, new Date(), 'shown')}\n`);
}
