/**
 * The shape of a task id, checked wherever an id from outside (a tool call, a workflow's input)
 * meets the server or the worker's disk: `bash-` then letters, digits and dashes, so an id can
 * never name a path outside the spill directory (no `/`, `.`, NUL) nor carry query text.
 */

/** Longest task id accepted: `bash-` and a UUID is 41 characters; Temporal allows ids of 1,000 bytes. */
export const MAX_TASK_ID_LENGTH = 100;

const TASK_ID_SHAPE = /^bash-[A-Za-z0-9-]+$/;

/** Whether `value` has the shape of a task id (it may still name no task). */
export function isTaskIdShape(value: string): boolean {
  return value.length <= MAX_TASK_ID_LENGTH && TASK_ID_SHAPE.test(value);
}
