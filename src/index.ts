/** durable-bash: bash, bash_output and bash_kill for AI agents, where every command run is a Temporal workflow. */
export type { ExecutorOptions } from './activities/index.js';
export type { AgentSessions } from './activities/inject-notice.js';
export { BashTasks, type BashTasksOptions, type StartRequest } from './client/bash-tasks.js';
export { connectClient, resolveTarget, type TemporalTarget } from './client/connect.js';
export type { OutputRead, StreamRead } from './client/output-reads.js';
export { registerSearchAttributes } from './client/search-attributes.js';
export type { TaskSnapshot } from './client/task-snapshot.js';
export {
  ForeignTaskError,
  InvalidArgumentsError,
  isInvalidArgumentsError,
  isTemporalUnreachableError,
  RunAbortedError,
  RunFailedError,
  TemporalUnreachableError,
  UnknownTaskError,
} from './errors.js';
export * from './shared/limits.js';
export {
  ownerSearchAttribute,
  searchAttributeNames,
  statusSearchAttribute,
} from './shared/search-attributes.js';
export type { BashTaskInput, BashTaskResult, CommandOutcome, StreamTail, TaskId } from './shared/task.js';
export { TaskStatus } from './shared/task.js';
export { DEFAULT_TASK_QUEUE } from './shared/task-queues.js';
export { type BashToolsOptions, createBashTools } from './tools/create-bash-tools.js';
export { renderRun } from './tools/render.js';
export type { CallView, ResultView, TextBlock, Tool, ToolExecContext, ToolResult } from './tools/types.js';
export { type AgentWorkerOptions, createAgentWorker } from './worker/agent-worker.js';
export { BashWorker, type BashWorkerOptions, createBashWorker } from './worker/bash-worker.js';
export { bundleWorkflows } from './worker/workflow-bundle.js';
