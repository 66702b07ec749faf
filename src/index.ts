/** durable-bash: bash tools for AI agents (bash, bash_output, bash_kill, bash_list, bash_input), where every command run is a Temporal workflow. */
export { Approvals, type ApprovalsOptions, type PendingApproval } from './client/approvals.js';
export {
  BashTasks,
  type BashTasksOptions,
  type ForegroundOutcome,
  type StartRequest,
} from './client/bash-tasks.js';
export type { OutputRead, StreamRead } from './client/output-reader-client.js';
export { registerSearchAttributes } from './client/register-search-attributes.js';
export type { TaskSnapshot } from './client/task-snapshot.js';
export { AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from './codec/aes-gcm-codec.js';
export {
  type CodecServerOptions,
  DEFAULT_UI_ORIGINS,
  type RunningCodecServer,
  startCodecServer,
} from './codec/codec-server.js';
export { encryptingDataConverter } from './codec/data-converter.js';
export { type CodecKey, CodecKeyring, loadKeyring, parseKeyring } from './codec/keyring.js';
export type { ExecutorOptions } from './command-host/executor-config.js';
export { connectClient, resolveTarget, type TemporalTarget } from './connection/connect.js';
export {
  type ConfigDataSource,
  type ConnectionConfig,
  DEFAULT_ADDRESS,
  DEFAULT_NAMESPACE,
  resolveConnectionConfig,
  type TemporalConnectionOptions,
  type TemporalTlsOptions,
} from './connection/connection-config.js';
export { connectNativeConnection } from './connection/native-connection.js';
export * from './defaults.js';
export { defaultSessionId, noticeTaskQueue, SESSION_ENV } from './mcp/session.js';
export { type McpServerOptions, type RunningMcpServer, startMcpServer } from './mcp/start-server.js';
export type {
  Approver,
  CommandMatch,
  CommandRule,
  DenyRule,
  PermissionDecision,
  PermissionPolicy,
  PermissionRequest,
} from './policy/policy-types.js';
export { RuleAction } from './policy/policy-types.js';
export { createRulePolicy, type RulePolicyOptions } from './policy/rules.js';
export { type CommandUnit, type SplitCommands, splitCommands } from './policy/split-commands.js';
export type {
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalPrompt,
  ApprovalQuestion,
  ApprovalRequest,
} from './shared/approval.js';
export {
  ApprovalError,
  BackgroundQuotaError,
  CodecKeyError,
  CommandDeniedError,
  CommandNotApprovedError,
  ConnectionConfigError,
  ForeignTaskError,
  InvalidArgumentsError,
  isConnectionConfigError,
  isInvalidArgumentsError,
  isSessionsApartUnavailableError,
  isTemporalUnreachableError,
  RunAbortedError,
  RunFailedError,
  SessionsApartUnavailableError,
  StdinWriteError,
  TemporalUnreachableError,
  ToolCallError,
  UnencryptedPayloadError,
  UnknownTaskError,
} from './shared/errors.js';
export {
  DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS,
  DEFAULT_MCP_HTTP_MAX_SESSIONS,
  DEFAULT_MCP_HTTP_SESSION_IDLE_MS,
  MCP_MAX_WAIT_MS,
} from './shared/limits.js';
export type { AgentSessions } from './shared/notice.js';
export { renderRun } from './shared/render.js';
export {
  noticeSearchAttribute,
  ownerSearchAttribute,
  searchAttributeNames,
  statusSearchAttribute,
} from './shared/search-attributes.js';
export type { StdinWrite, StdinWriteResult } from './shared/stdin.js';
export type { BashTaskInput, BashTaskResult, CommandOutcome, StreamTail, TaskId } from './shared/task.js';
export { TaskStatus } from './shared/task.js';
export type {
  CallView,
  ResultView,
  TextBlock,
  Tool,
  ToolExecContext,
  ToolResult,
} from './shared/tool-types.js';
export {
  isUnencryptedPayload,
  UNENCRYPTED_PAYLOAD,
  type UnencryptedPayload,
} from './shared/unencrypted-payload.js';
export { type BashToolsOptions, createBashTools } from './tools/create-bash-tools.js';
export { type AgentWorkerOptions, createAgentWorker, type DeliveredNotice } from './worker/agent-worker.js';
export { BashWorker, type BashWorkerOptions, createBashWorker } from './worker/bash-worker.js';
export { checkDeploymentOptions, deploymentVersion } from './worker/deployment-version.js';
export { type HiddenKeyMaterial, hideKeyMaterial } from './worker/hide-key-material.js';
export { prometheusMetrics } from './worker/prometheus-metrics.js';
export { bundleWorkflows } from './worker/workflow-bundle.js';
