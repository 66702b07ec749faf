import { ApplicationFailure } from '@temporalio/activity';
import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import type { CommandHost } from '../shared/task.js';

/** The failure type of a host choice that reached a host the task asked to avoid; retried elsewhere. */
export const AVOIDED_HOST = 'AvoidedHost';

/**
 * Picks this worker's host for a command whose workflow runs elsewhere (a worker with another
 * `commandTaskQueue`): whichever worker of the command queue takes this activity is the host, and
 * everything after goes to its own queue. A host in `avoidHostQueues` (one a restarting task lost
 * before) refuses, so a retry goes to another worker of the queue.
 */
export function createChooseHost(config: CompiledExecutorOptions) {
  return async function chooseHost(avoidHostQueues?: string[]): Promise<CommandHost> {
    if (avoidHostQueues?.includes(config.hostQueue)) {
      throw ApplicationFailure.retryable(
        `host ${config.hostId} was lost by this task before; another host takes it`,
        AVOIDED_HOST,
      );
    }
    return { hostId: config.hostId, hostQueue: config.hostQueue };
  };
}
