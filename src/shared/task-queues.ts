/** The task queue that `durable-bash dev` and `durable-bash worker` serve unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'durable-bash';

/**
 * A host's own task queue, named from the worker's queue and its stable host identity: the command
 * of a task started on that host is re-attached and killed only there.
 */
export function hostTaskQueue(taskQueue: string, hostId: string): string {
  return `${taskQueue}@${hostId}`;
}

/**
 * A host's control queue: reads, stops, stdin writes and releases of the commands on that host. A
 * queue of its own gives them their own worker slots, so a host whose command slots are all taken
 * by running commands still answers them at once.
 */
export function controlTaskQueue(hostQueue: string): string {
  return `${hostQueue}/control`;
}
