/**
 * The Node.js check of `durable-bash/openai-agents`, in a module of its own so the entry point
 * imports it first: it runs before `@openai/agents-core` (Node.js 22+) is loaded.
 */
import { requireNode } from '../shared/node-version.js';

requireNode('durable-bash/openai-agents', 22);
