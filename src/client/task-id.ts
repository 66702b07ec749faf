import { randomUUID } from 'node:crypto';
import type { TaskId } from '../shared/task.js';

const TASK_ID_PATTERN = /^bash-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A fresh task id; random, so ids never collide across restarts of any process or fleet. */
export function newTaskId(): TaskId {
  return `bash-${randomUUID()}` as TaskId;
}

export function isTaskId(value: string): value is TaskId {
  return TASK_ID_PATTERN.test(value);
}
