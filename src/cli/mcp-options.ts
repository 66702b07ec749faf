/**
 * The `mcp` command's options, apart from the server they start (mcp.ts), so the CLI builds its
 * commands without loading the MCP SDK: a `worker` process never needs it.
 */
import os from 'node:os';
import path from 'node:path';
import { type Command, Option } from 'commander';
import type { HttpListen } from '../mcp/http.js';
import { SESSION_ENV } from '../mcp/session.js';
import {
  DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS,
  DEFAULT_MCP_HTTP_MAX_SESSIONS,
  DEFAULT_MCP_HTTP_SESSION_IDLE_MS,
} from '../shared/limits.js';
import { BashArgumentsShape } from '../tools/claude-code-bash-arguments.js';
import type { CodecFlags } from './codec-options.js';
import { parseHttpListen } from './listen-address.js';
import { MCP_TOKEN_ENV, MCP_TOKEN_FILE_NAME } from './mcp-http-token.js';
import type { MetricsFlags } from './metrics-option.js';
import { collectRepeated, positiveInt, type ServerOptions } from './options.js';

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
  /** The rest apply only with --http (mcp.ts refuses them without it). */
  httpTokenFile?: string;
  httpNoAuth?: boolean;
  httpMaxSessions?: number;
  httpSessionIdleMs?: number;
  /** A number of milliseconds, or false from --no-auto-background. */
  autoBackground: number | false;
  stateDir: string;
  /** The arguments `bash` takes. */
  bashArguments: BashArgumentsShape;
  channel?: boolean;
}

/** The state directory a session's notice file lives under unless --state-dir says otherwise. */
export const DEFAULT_STATE_DIR = path.join(os.homedir(), '.durable-bash');

/** Adds the mcp command's own options. */
export function withMcpOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--session <id>',
        'the agent session every call acts as (default: claude-code:<CLAUDE_CODE_SESSION_ID> when Claude Code started the server, else mcp:<user>@<host>:<cwd>, the same across restarts)',
      ).env(SESSION_ENV),
    )
    .addOption(
      new Option(
        '--bash-arguments <shape>',
        "the arguments bash takes: durable-bash's own, or Claude Code's Bash's (command, timeout, description, run_in_background), for a host that routes Claude Code's Bash here",
      )
        .choices(Object.values(BashArgumentsShape))
        .default(BashArgumentsShape.durableBash),
    )
    .option('--cwd <dir>', "the session's working directory (default: the process's cwd)")
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on http://host:port/mcp instead of stdio (host: 127.0.0.1)',
      parseHttpListen,
    )
    .option(
      '--http-token-file <file>',
      `with --http: the file holding the token every request must send as Authorization: Bearer <token> (else ${MCP_TOKEN_ENV}, else <state dir>/${MCP_TOKEN_FILE_NAME}, made at the first start)`,
    )
    .addOption(
      new Option(
        '--http-no-auth',
        'with --http on a loopback address only: ask no token (every process on this machine may use the server)',
      ).conflicts('httpTokenFile'),
    )
    .addOption(
      new Option(
        '--http-max-sessions <n>',
        `with --http: the most MCP sessions held at once (default: ${DEFAULT_MCP_HTTP_MAX_SESSIONS})`,
      ).argParser(positiveInt),
    )
    .addOption(
      new Option(
        '--http-session-idle-ms <ms>',
        `with --http: end a session after this long with no request open (default: ${DEFAULT_MCP_HTTP_SESSION_IDLE_MS})`,
      ).argParser(positiveInt),
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
    .option('--allow <rule>', 'allow commands matching this prefix or /regex/ (repeatable)', collectRepeated)
    .option(
      '--ask <rule>',
      'ask about commands matching this prefix or /regex/: the call waits for a durable decision (durable-bash approve, or the MCP client by elicitation) (repeatable)',
      collectRepeated,
    )
    .option('--deny <rule>', 'deny commands matching this prefix or /regex/ (repeatable)', collectRepeated)
    .addOption(
      new Option('--default-action <action>', 'for a command no --allow, --ask or --deny rule matches')
        .choices(['allow', 'ask', 'deny'])
        .default('allow'),
    )
    .addOption(
      new Option(
        '--channel',
        "stdio only: deliver notices as Claude Code channel messages, each starting a turn (only for a Claude Code that takes this server's channel: see docs/CLAUDE-CODE.md)",
      ).conflicts('http'),
    )
    .addOption(
      new Option('--state-dir <dir>', 'where pending completion notices are kept')
        .env('DURABLE_BASH_STATE_DIR')
        .default(DEFAULT_STATE_DIR, '~/.durable-bash'),
    );
}
