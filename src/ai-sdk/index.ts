/** durable-bash/ai-sdk: the durable-bash tools as Vercel AI SDK tools. */
export {
  type AiSdkSession,
  type AiSdkTools,
  type AiSdkToolsOptions,
  BashToolError,
  createAiSdkTools,
  isBashToolError,
} from './create-ai-sdk-tools.js';
export {
  DurableBashProcess,
  type SerializedDurableBashProcess,
} from './durable-bash-process.js';
export {
  createDurableBashSandbox,
  DurableBashSandbox,
  type DurableBashSandboxOptions,
  type SerializedDurableBashSandbox,
} from './durable-bash-sandbox.js';
export { type DurableBashClientOptions, registerDurableBashClient } from './sandbox-client.js';
export { WORKFLOW_DESERIALIZE, WORKFLOW_SERIALIZE } from './workflow-serde.js';
