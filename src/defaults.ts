/**
 * The documented defaults and limits of durable-bash's public options, the ones a user may want to
 * read or build on (`createBashWorker`'s executor options, `createBashTools`' options, the tools'
 * argument limits). Internal timings and cadences stay in shared/limits.ts, free to change.
 */
export {
  DEFAULT_LOST_AFTER_MS,
  DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  DEFAULT_MAX_OUTPUT_BYTES_PER_STREAM,
  DEFAULT_MAX_PROCESSES,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_MAX_WAIT_MS,
  DEFAULT_NOTICE_WINDOW_MS,
  DEFAULT_OUTPUT_LIMIT_BYTES,
  DEFAULT_SPILL_QUOTA_BYTES,
  DEFAULT_SPILL_RETENTION_MS,
  DEFAULT_TIMEOUT_MS,
  HEARTBEAT_TIMEOUT_MS as DEFAULT_HEARTBEAT_TIMEOUT_MS,
  KILL_GRACE_MS,
  MAX_COMMAND_BYTES,
  MAX_DESCRIPTION_BYTES,
  MAX_FILTER_BYTES,
  MAX_INPUT_BYTES,
  MAX_WORKDIR_BYTES,
} from './shared/limits.js';
export { DEFAULT_TASK_QUEUE } from './shared/task-queues.js';
