/** The environment a command gets: the worker's, less Temporal's credentials and configured secrets, plus the task's. */
import type { CommandEnvs, CompiledExecutorOptions } from '../executor-config.js';
import { withNonInteractiveDefaults } from './non-interactive-env.js';

/** What a terminal task's programs are told they run on: the emulator its screen is rendered by speaks xterm's language. */
export const TERMINAL_TYPE = 'xterm-256color';

/**
 * The worker's environment as its commands get it, read once: a command starts with the
 * environment the worker had when it was set up, as a service's children do. Read again for each
 * command it cost 0.6 ms of the worker's main thread a task in a burst (most of it enumerating
 * `process.env`), and its copy sent to the nursery 0.4 ms more (docs/PERFORMANCE.md).
 */
export function commandEnvs(
  config: Pick<CompiledExecutorOptions, 'secretEnv' | 'envAllowlist' | 'nonInteractiveDefaults'>,
  env: NodeJS.ProcessEnv = process.env,
): CommandEnvs {
  return {
    plain: Object.freeze(taskEnv(config, env)),
    terminal: Object.freeze(taskEnv(config, env, { terminal: true })),
  };
}

/**
 * A task's environment as this worker's config makes it (see `commandEnv` and NON_INTERACTIVE_ENV).
 * A terminal task has a person's terminal: `TERM` names it, and nothing keeps its programs from
 * asking questions (they are answered with `bash_input`).
 */
export function taskEnv(
  config: Pick<CompiledExecutorOptions, 'secretEnv' | 'envAllowlist' | 'nonInteractiveDefaults'>,
  env: NodeJS.ProcessEnv = process.env,
  options: { terminal?: boolean } = {},
): NodeJS.ProcessEnv {
  const own = commandEnv(config.secretEnv, config.envAllowlist, env);
  if (options.terminal) return { ...own, TERM: TERMINAL_TYPE };
  return config.nonInteractiveDefaults ? withNonInteractiveDefaults(own) : own;
}

/**
 * The child's environment: the worker's, less Temporal credentials, durable-bash's own keys and
 * configured secrets; or, with an allowlist, only the listed variables (a name, or a prefix ending
 * in `*`), still never those.
 */
export function commandEnv(
  secretEnv: readonly string[],
  allowlist?: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const secrets = new Set(secretEnv);
  const allowed = allowlist === undefined ? () => true : allowedBy(allowlist);
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !isWorkerCredential(name) && !secrets.has(name) && allowed(name)),
  );
}

function allowedBy(allowlist: readonly string[]): (name: string) => boolean {
  const names = new Set(allowlist.filter((entry) => !entry.endsWith('*')));
  const prefixes = allowlist.filter((entry) => entry.endsWith('*')).map((entry) => entry.slice(0, -1));
  return (name) => names.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

/**
 * The worker's own credentials, never a command's: Temporal's (`TEMPORAL_*`: API keys, TLS key
 * paths), the payload codec's keys and codec server token (`DURABLE_BASH_CODEC_*`), and the MCP
 * server's token (`DURABLE_BASH_MCP_TOKEN`, src/cli/mcp-http-token.ts), with which a command could
 * answer its own approval as the MCP client.
 */
export function isWorkerCredential(name: string): boolean {
  return (
    name.startsWith('TEMPORAL_') || name.startsWith('DURABLE_BASH_CODEC') || name === 'DURABLE_BASH_MCP_TOKEN'
  );
}
