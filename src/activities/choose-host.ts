import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import type { CommandHost } from '../shared/task.js';

/**
 * Picks this worker's host for a command whose workflow runs elsewhere (a worker with another
 * `commandTaskQueue`): whichever worker of the command queue takes this activity is the host, and
 * everything after goes to its own queue.
 */
export function createChooseHost(config: CompiledExecutorOptions) {
  return async function chooseHost(): Promise<CommandHost> {
    return { hostId: config.hostId, hostQueue: config.hostQueue };
  };
}
