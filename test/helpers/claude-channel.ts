/**
 * What the real `claude` needs to take a channel offline: the server in a plugin (here a minimal
 * one, loaded with `--plugin-dir`, so its marketplace is `inline`), that plugin on the channel
 * allowlist, and the `tengu_harbor` rollout flag on. The allowlist and the flag are Anthropic's
 * GrowthBook features; claude reads them from its disk cache in `$HOME/.claude.json` when
 * CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF is set, so a test seeds both there.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The test plugin's name, and its one MCP server's. */
export const CHANNEL_PLUGIN = 'dbt';
export const CHANNEL_SERVER = 'db';

/** The name claude gives a tool of the plugin's server. */
export const pluginTool = (tool: string) => `mcp__plugin_${CHANNEL_PLUGIN}_${CHANNEL_SERVER}__${tool}`;

/** The `source` attribute of the plugin server's channel messages. */
export const CHANNEL_SOURCE = `plugin:${CHANNEL_PLUGIN}:${CHANNEL_SERVER}`;

/** The environment claude needs to read the seeded flags while telemetry is off. */
export const CHANNEL_ENV = { CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF: '1' };

/**
 * Writes the plugin under `dir` (its `.claude-plugin/plugin.json` starts `command args` as its
 * channel server) and returns the folder for `--plugin-dir`.
 */
export function writeChannelPlugin(dir: string, command: string, args: string[]): string {
  const root = path.join(dir, CHANNEL_PLUGIN);
  mkdirSync(path.join(root, '.claude-plugin'), { recursive: true });
  const manifest = {
    name: CHANNEL_PLUGIN,
    version: '0.0.1',
    description: 'durable-bash mcp --channel, for tests',
    // Loaded before the first turn starts: claude registers a channel only for a server connected
    // when a turn starts, and a server that connects later waits for the next user turn.
    mcpServers: { [CHANNEL_SERVER]: { command, args, alwaysLoad: true } },
    channels: [{ server: CHANNEL_SERVER }],
  };
  writeFileSync(path.join(root, '.claude-plugin', 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return root;
}

/** Turns channels on in `home` and puts `plugin` (loaded with --plugin-dir) on the allowlist. */
export function seedChannels(home: string, plugin = CHANNEL_PLUGIN): void {
  const features = {
    tengu_harbor: true,
    tengu_harbor_ledger: [{ marketplace: 'inline', plugin }],
  };
  writeFileSync(
    path.join(home, '.claude.json'),
    `${JSON.stringify({ cachedGrowthBookFeatures: features })}\n`,
  );
}

/**
 * The flags that start claude as a headless streaming session with the plugin's channel on, its
 * `tools` allowed.
 */
export function channelSessionArgs(pluginDir: string, tools: string[]): string[] {
  return [
    ...['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose'],
    ...['--plugin-dir', pluginDir, '--channels', `plugin:${CHANNEL_PLUGIN}@inline`],
    ...['--allowedTools', tools.map(pluginTool).join(',')],
  ];
}

/** A stream-json user message. */
export const userMessage = (text: string) => ({
  type: 'user',
  message: { role: 'user', content: text },
  parent_tool_use_id: null,
  session_id: '',
});

/** The `source` of the shipped plugin's channel messages (claude-plugin/, server durable-bash). */
export const SHIPPED_CHANNEL_SOURCE = 'plugin:durable-bash:durable-bash';
