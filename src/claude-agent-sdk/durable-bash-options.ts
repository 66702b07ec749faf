/**
 * `durableBashOptions`: what the Claude Agent SDK's `query()` needs to run the model's own Bash on
 * durable-bash: the `durable-bash mcp` server taking Claude Code's Bash arguments, the alias that
 * routes Bash to it, and the tools that only read allowed; with `channels`, the package's plugin in
 * place of the server, so that its notices wake an idle session. Plain data: the SDK is a type here
 * only.
 */
import { fileURLToPath } from 'node:url';
import type { McpStdioServerConfig, Options } from '@anthropic-ai/claude-agent-sdk';

/** The MCP server's name in `mcpServers`, which Claude Code's names of its tools start with. */
export const DURABLE_BASH_SERVER = 'durable-bash';

/** A tool of the server as Claude Code names it (`mcp__durable-bash__bash`). */
export const durableBashTool = (tool: string): string => `mcp__${DURABLE_BASH_SERVER}__${tool}`;

/** The plugin shipped in the package (claude-plugin/), as the SDK loads it: marketplace `inline`. */
export const DURABLE_BASH_PLUGIN = 'durable-bash@inline';

/** A tool of the plugin's server as Claude Code names it (`mcp__plugin_durable-bash_durable-bash__bash`). */
export const durableBashPluginTool = (tool: string): string =>
  `mcp__plugin_durable-bash_${DURABLE_BASH_SERVER}__${tool}`;

/** Where Temporal is and how to reach it, as `durable-bash mcp` takes it; what is left out comes from the `TEMPORAL_*` variables, then `temporal.toml`. */
export interface DurableBashConnection {
  /** Temporal frontend address. @default TEMPORAL_ADDRESS, else localhost:7233 */
  address?: string;
  /** @default TEMPORAL_NAMESPACE, else 'default' */
  namespace?: string;
  /** The task queue the command workers serve. @default 'durable-bash' */
  taskQueue?: string;
  /** A `temporal.toml` profile to read. @default TEMPORAL_PROFILE, else 'default' */
  profile?: string;
  /** The `temporal.toml` to read. @default TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml */
  configFile?: string;
  /** Connect with TLS (on when any TLS file, a server name or an API key is given). */
  tls?: boolean;
  tlsCaPath?: string;
  tlsCertPath?: string;
  tlsKeyPath?: string;
  tlsServerName?: string;
  /** Sent as a bearer token; it reaches the server in its environment (TEMPORAL_API_KEY), not its command line. */
  apiKey?: string;
  /** Encryption keys, one `<key id>=<base64 of 32 bytes>` a line, the current key first: the workers' keys. */
  codecKeyFile?: string;
}

export interface DurableBashOptions extends DurableBashConnection {
  /**
   * A foreground call still running after this long moves to a background task (`durable-bash mcp
   * --auto-background`); false: never, the call holds until its `timeout`. @default 45000
   */
  autoBackgroundMs?: number | false;
  /** Where the server keeps its sessions' pending notices. @default DURABLE_BASH_STATE_DIR, else ~/.durable-bash */
  stateDir?: string;
  /** Variables for the server process, over those Claude Code passes on (its own environment). */
  env?: Record<string, string>;
  /**
   * Deliver notices as channel messages that start a turn of an idle session: the server then comes
   * from the plugin in the package's claude-plugin/ folder, which is what Claude Code takes channels
   * from. Only where channels are rolled out to you and the plugin (`durable-bash@inline`) is on the
   * channel allowlist: elsewhere Claude Code drops every notice (docs/CLAUDE-CODE.md). With it,
   * `apiKey` and `env` cannot reach the server; give `TEMPORAL_API_KEY` in `query()`'s `env`.
   * @default false
   */
  channels?: boolean;
}

/** What `durableBashOptions` returns: the part of the Agent SDK's `Options` it fills. */
export type DurableBashQueryOptions = Required<Pick<Options, 'mcpServers' | 'toolAliases' | 'allowedTools'>>;

/** What `durableBashOptions({ channels: true })` returns: the plugin in place of the MCP server. */
export type DurableBashChannelQueryOptions = Required<
  Pick<Options, 'plugins' | 'settings' | 'extraArgs' | 'toolAliases' | 'allowedTools'>
>;

/** This package's CLI, which the server runs from: `dist/cli/main.js` beside this module's folder. */
const CLI_MAIN = fileURLToPath(new URL('../cli/main.js', import.meta.url));

/** The package's Claude Code plugin, which runs the CLI of the package it is in. */
const PLUGIN_DIR = fileURLToPath(new URL('../../claude-plugin', import.meta.url));

/**
 * Options to spread into `query()`'s: the model sees Claude Code's own Bash and every call of it runs
 * on durable-bash, in the session of the conversation (`claude-code:<session id>`, the same after a
 * resume). `bash_output` and `bash_list` are allowed, since they only read; `bash`, `bash_kill`,
 * `bash_input` and the rest follow the permission mode, which checks them by their own names.
 * Merge your own `mcpServers` and `allowedTools` with these rather than replacing them.
 */
export function durableBashOptions(
  options?: DurableBashOptions & { channels?: false },
): DurableBashQueryOptions;
export function durableBashOptions(
  options: DurableBashOptions & { channels: true },
): DurableBashChannelQueryOptions;
export function durableBashOptions(
  options?: DurableBashOptions,
): DurableBashQueryOptions | DurableBashChannelQueryOptions;
export function durableBashOptions(
  options: DurableBashOptions = {},
): DurableBashQueryOptions | DurableBashChannelQueryOptions {
  if (options.channels === true) return channelOptions(options);
  const server: McpStdioServerConfig = {
    type: 'stdio',
    command: process.execPath,
    args: [
      CLI_MAIN,
      'mcp',
      ...['--bash-arguments', 'claude-code'],
      ...connectionArgs(options),
      ...autoBackgroundArgs(options.autoBackgroundMs),
    ],
    env: {
      ...(options.apiKey !== undefined ? { TEMPORAL_API_KEY: options.apiKey } : {}),
      ...(options.stateDir !== undefined ? { DURABLE_BASH_STATE_DIR: options.stateDir } : {}),
      ...options.env,
    },
    // Its tools stay in the model's tools list: a deferred tool's first failure would get Claude
    // Code's hint, which shows the model the MCP schema and name of what it called as Bash.
    alwaysLoad: true,
  };
  return {
    mcpServers: { [DURABLE_BASH_SERVER]: server },
    toolAliases: { Bash: durableBashTool('bash') },
    allowedTools: [durableBashTool('bash_output'), durableBashTool('bash_list')],
  };
}

/**
 * The plugin, with its options in the flag settings (`pluginConfigs`), and the session named as a
 * channel: Claude Code takes channels only from a plugin's server, never from an `mcpServers` entry.
 */
function channelOptions(options: DurableBashOptions): DurableBashChannelQueryOptions {
  if (options.apiKey !== undefined || options.env !== undefined)
    throw new Error(
      "durableBashOptions: with channels, the server is the plugin's, which apiKey and env cannot reach; set TEMPORAL_API_KEY and the rest in query()'s env",
    );
  const { address, namespace, taskQueue, ...rest } = options;
  const flags = [
    ...connectionArgs({ ...rest }),
    ...autoBackgroundArgs(options.autoBackgroundMs),
    ...(options.stateDir !== undefined ? ['--state-dir', options.stateDir] : []),
  ];
  const pluginOptions = {
    ...(address !== undefined ? { address } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(taskQueue !== undefined ? { task_queue: taskQueue } : {}),
    channel: true,
    bash_arguments: 'claude-code',
    ...(flags.length > 0 ? { mcp_flags: JSON.stringify(flags) } : {}),
  };
  return {
    plugins: [{ type: 'local', path: PLUGIN_DIR }],
    settings: { pluginConfigs: { [DURABLE_BASH_PLUGIN]: { options: pluginOptions } } },
    extraArgs: { channels: `plugin:${DURABLE_BASH_PLUGIN}` },
    toolAliases: { Bash: durableBashPluginTool('bash') },
    allowedTools: [durableBashPluginTool('bash_output'), durableBashPluginTool('bash_list')],
  };
}

/** The `durable-bash mcp` flags for a connection, the API key left to the environment. */
function connectionArgs(options: DurableBashConnection): string[] {
  const flag = (name: string, value: string | undefined) => (value === undefined ? [] : [name, value]);
  return [
    ...flag('--address', options.address),
    ...flag('--namespace', options.namespace),
    ...flag('--task-queue', options.taskQueue),
    ...flag('--profile', options.profile),
    ...flag('--config-file', options.configFile),
    ...(options.tls === true ? ['--tls'] : []),
    ...flag('--tls-ca-path', options.tlsCaPath),
    ...flag('--tls-cert-path', options.tlsCertPath),
    ...flag('--tls-key-path', options.tlsKeyPath),
    ...flag('--tls-server-name', options.tlsServerName),
    ...flag('--codec-key-file', options.codecKeyFile),
  ];
}

function autoBackgroundArgs(afterMs: number | false | undefined): string[] {
  if (afterMs === undefined) return [];
  return afterMs === false ? ['--no-auto-background'] : ['--auto-background', String(afterMs)];
}
