/**
 * `durable-bash/claude-agent-sdk`: the Claude Agent SDK's (`@anthropic-ai/claude-agent-sdk`) Bash on
 * durable-bash, through `durable-bash mcp` and the SDK's `toolAliases` (docs/CLAUDE-CODE.md).
 */
export {
  DURABLE_BASH_PLUGIN,
  DURABLE_BASH_SERVER,
  type DurableBashChannelQueryOptions,
  type DurableBashConnection,
  type DurableBashOptions,
  type DurableBashQueryOptions,
  durableBashOptions,
  durableBashPluginTool,
  durableBashTool,
} from './durable-bash-options.js';
