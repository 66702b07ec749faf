/**
 * `durable-bash/openai-agents`: a durable-bash session as the OpenAI Agents SDK's sandbox
 * (`@openai/agents-core/sandbox`, which needs Node.js 22+; docs/SANDBOXES.md, "OpenAI Agents SDK").
 */
import './node-check.js';

export {
  type DurableBashCreateOptions,
  DurableBashSandboxClient,
  type DurableBashSandboxClientOptions,
} from './client.js';
export { asSandboxError } from './errors.js';
export { DurableBashSandboxSession, type DurableBashSessionState, type SandboxProcess } from './session.js';
