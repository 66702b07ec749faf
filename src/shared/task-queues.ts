/** The task queue that `durable-bash dev` and `durable-bash worker` serve unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'durable-bash';
