/** durable-bash/ai-sdk: the durable-bash tools as Vercel AI SDK tools. */
export {
  type AiSdkSession,
  type AiSdkTools,
  type AiSdkToolsOptions,
  BashToolError,
  createAiSdkTools,
  isBashToolError,
} from './create-ai-sdk-tools.js';
