/**
 * durable-bash/openai-agents: the durable-bash tools as an OpenAI Agents SDK sandbox
 * (`@openai/agents-core/sandbox`, which needs Node.js 22+). For now, only the check of the Node.js.
 */
import { requireNode } from '../shared/node-version.js';

requireNode('durable-bash/openai-agents', 22);
