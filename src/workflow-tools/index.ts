/**
 * `durable-bash/workflow`: the tools for agent loops that are themselves Temporal workflows. Import
 * it from workflow code only (it does no I/O); the durable-bash worker of the command queue runs
 * what it asks for. See docs/WORKFLOWS.md.
 */
export type { ToolResult } from '../shared/tool-types.js';
export { isUnencryptedPayload } from '../shared/unencrypted-payload.js';
export { type BashNotice, bashNoticeSignal } from '../workflows/notice-signal.js';
export { type BashNoticeInbox, onBashNotice } from './bash-notices.js';
export {
  type WorkflowBashTools,
  type WorkflowBashToolsOptions,
  workflowBashTools,
} from './workflow-bash-tools.js';
