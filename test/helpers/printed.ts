/** How much of a running task's stdout its host has, and how much the server holds. */
import type { BashTasks } from '../../src/client/bash-tasks.js';
import { START_OF_OUTPUT } from '../../src/shared/read-position.js';

/**
 * How many bytes a running task has printed to stdout, read on its host (a peek: no read position
 * moves); what the server holds when the host does not answer.
 */
export async function printedBytes(tasks: BashTasks, taskId: string, owner?: string): Promise<number> {
  const peeked = await tasks.peek(taskId, owner, START_OF_OUTPUT, 0);
  return peeked?.upTo.stdout ?? (await tasks.snapshot(taskId, owner)).stdout.bytes;
}

/** How many bytes of a task's stdout the server holds (its last heartbeat, or its result). */
export async function heldBytes(tasks: BashTasks, taskId: string, owner?: string): Promise<number> {
  return (await tasks.snapshot(taskId, owner)).stdout.bytes;
}
