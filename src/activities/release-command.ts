import type { AttachedTasks } from '../command-host/attached-tasks.js';

/**
 * Tells the foreground attempt of a task that moved to the background to let go of its command (it
 * keeps running, and an attempt without the foreground deadline re-attaches). The move's
 * cancellation of that attempt says the same, but only in a heartbeat's response, a minute apart;
 * this reaches it at once. A task with no attempt here has nothing to let go of.
 */
export function createReleaseCommand(attached: AttachedTasks) {
  return async function releaseCommand(taskId: string): Promise<void> {
    attached.get(taskId)?.release();
  };
}
