import { type Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { localSessionId } from './identity.js';

/** Adds the options every server-facing command shares: --address, --namespace, --task-queue. */
export function withServerOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--address <host:port>', 'Temporal frontend address')
        .env('TEMPORAL_ADDRESS')
        .default('localhost:7233'),
    )
    .addOption(
      new Option('--namespace <name>', 'Temporal namespace').env('TEMPORAL_NAMESPACE').default('default'),
    )
    .addOption(
      new Option('--task-queue <name>', 'task queue the command workers serve').default(DEFAULT_TASK_QUEUE),
    );
}

export interface ServerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
}

export function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0)
    throw new InvalidArgumentError(`expected a positive integer, got ${value}`);
  return parsed;
}

/** Adds --owner: the agent session the command acts as (tasks it starts belong to it; it may touch only those). */
export function withOwnerOption(command: Command, what: string): Command {
  return command.addOption(
    new Option('--owner <session-id>', what)
      .env('DURABLE_BASH_OWNER')
      .default(localSessionId(), 'cli:<user>@<host>, the same across restarts'),
  );
}
