import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { type Command, Option } from 'commander';
import { connectClient } from '../connection/connect.js';
import { resolveConnectionConfig } from '../connection/connection-config.js';
import { connectNativeConnection } from '../connection/native-connection.js';
import type { HttpListen } from '../mcp/http.js';
import { defaultSessionId, SESSION_ENV } from '../mcp/session.js';
import { startMcpServer } from '../mcp/start-server.js';
import type { PermissionPolicy } from '../policy/policy-types.js';
import { textRulePolicy } from '../policy/rules.js';
import { DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS } from '../shared/limits.js';
import { type CodecFlags, codecDataConverter } from './codec-options.js';
import { parseHttpListen } from './listen-address.js';
import type { MetricsFlags } from './metrics-option.js';
import { connectionTarget, positiveInt, type ServerOptions } from './options.js';
import { installQuietRuntime } from './quiet-logger.js';

export interface McpFlags extends ServerOptions, CodecFlags, MetricsFlags {
  session?: string;
  /** Permission rules (a prefix or /regex/), each repeatable. */
  allow?: string[];
  ask?: string[];
  deny?: string[];
  /** For a command no rule matches. */
  defaultAction: 'allow' | 'ask' | 'deny';
  cwd?: string;
  http?: HttpListen;
  /** A number of milliseconds, or false from --no-auto-background. */
  autoBackground: number | false;
  stateDir: string;
}

/** The state directory a session's notice file lives under unless --state-dir says otherwise. */
export const DEFAULT_STATE_DIR = path.join(os.homedir(), '.durable-bash');

/** Adds the mcp command's own options. */
export function withMcpOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--session <id>',
        'the agent session every call acts as (default: mcp:<user>@<host>:<cwd>, the same across restarts)',
      ).env(SESSION_ENV),
    )
    .option('--cwd <dir>', "the session's working directory (default: the process's cwd)")
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on http://host:port/mcp instead of stdio (host: 127.0.0.1)',
      parseHttpListen,
    )
    .addOption(
      new Option(
        '--auto-background <ms>',
        'move a foreground bash call to the background after this long (below the 60 s client timeout)',
      )
        .argParser(positiveInt)
        .default(DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS),
    )
    .option('--no-auto-background', 'never move a foreground call to the background')
    .option(
      '--allow <rule>',
      'allow commands matching this prefix or /regex/ (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--ask <rule>',
      'ask about commands matching this prefix or /regex/: the call waits for a durable decision (durable-bash approve, or the MCP client by elicitation) (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--deny <rule>',
      'deny commands matching this prefix or /regex/ (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addOption(
      new Option('--default-action <action>', 'for a command no --allow, --ask or --deny rule matches')
        .choices(['allow', 'ask', 'deny'])
        .default('allow'),
    )
    .addOption(
      new Option('--state-dir <dir>', 'where pending completion notices are kept')
        .env('DURABLE_BASH_STATE_DIR')
        .default(DEFAULT_STATE_DIR, '~/.durable-bash'),
    );
}

/**
 * Serves the tools over MCP until stdin ends (stdio) or SIGINT/SIGTERM. Stdout carries only the
 * protocol; every line for people goes to stderr.
 */
export async function runMcp(flags: McpFlags): Promise<void> {
  const cwd = path.resolve(flags.cwd ?? process.cwd());
  const sessionId = flags.session ?? defaultSessionId(cwd);
  const config = resolveConnectionConfig(connectionTarget(flags));
  installQuietRuntime({ metrics: flags.metricsPort }).target = config.address;
  const dataConverter = codecDataConverter(flags);
  const client = await connectClient(config, dataConverter);
  const connection = await connectNativeConnection(config);
  try {
    const host = await startMcpServer({
      client,
      connection,
      sessionId,
      cwd,
      taskQueue: flags.taskQueue,
      stateDir: flags.stateDir,
      autoBackgroundAfterMs: flags.autoBackground === false ? undefined : flags.autoBackground,
      ...policyOf(flags),
      ...(flags.http !== undefined ? { http: flags.http } : {}),
      version: packageVersion(),
    });
    process.stderr.write(
      `durable-bash: MCP server for session ${sessionId} on ${host.url ?? 'stdio'} (${config.address}, ${config.namespace})\n`,
    );
    await host.done;
  } finally {
    await connection.close();
    await client.connection.close();
  }
}

function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

/** The rule policy the flags ask for; none when they give no rule and allow by default. */
function policyOf(flags: McpFlags): { policy?: PermissionPolicy } {
  const policy = textRulePolicy(flags);
  return policy === undefined ? {} : { policy };
}
