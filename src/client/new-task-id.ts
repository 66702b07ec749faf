import { randomUUID } from 'node:crypto';
import type { TaskId } from '../shared/task.js';

/** A fresh task id; random, so ids never collide across restarts of any process or fleet. */
export function newTaskId(): TaskId {
  return `bash-${randomUUID()}` as TaskId;
}
