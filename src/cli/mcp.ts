import { createRequire } from 'node:module';
import path from 'node:path';
import { connectClient } from '../connection/connect.js';
import { resolveConnectionConfig } from '../connection/connection-config.js';
import { connectNativeConnection } from '../connection/native-connection.js';
import { claudeCodeSessionId, defaultSessionId } from '../mcp/session.js';
import { startMcpServer } from '../mcp/start-server.js';
import type { PermissionPolicy } from '../policy/policy-types.js';
import { textRulePolicy } from '../policy/rules.js';
import { codecDataConverter } from './codec-options.js';
import { httpOptions, httpWarnings } from './mcp-http.js';
import type { McpFlags } from './mcp-options.js';
import { connectionTarget } from './options.js';
import { installQuietRuntime } from './quiet-logger.js';

/**
 * Serves the tools over MCP until stdin ends (stdio) or SIGINT/SIGTERM. Stdout carries only the
 * protocol; every line for people goes to stderr.
 */
export async function runMcp(flags: McpFlags): Promise<void> {
  const cwd = path.resolve(flags.cwd ?? process.cwd());
  const sessionId = flags.session ?? sessionOfClaudeCode() ?? defaultSessionId(cwd);
  const http = httpOptions(flags);
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
      bashArguments: flags.bashArguments,
      ...policyOf(flags),
      ...(flags.channel === true ? { channel: true } : {}),
      ...(http !== undefined ? { http } : {}),
      version: packageVersion(),
    });
    if (http !== undefined) process.stderr.write(httpWarnings(http, host.url ?? '', sessionId));
    process.stderr.write(
      `durable-bash: MCP server for session ${sessionId} on ${host.url ?? 'stdio'} (${config.address}, ${config.namespace})\n`,
    );
    await host.done;
  } finally {
    await connection.close();
    await client.connection.close();
  }
}

/** The Claude Code conversation's session, when Claude Code started this server; says on stderr when its variable is ignored. */
function sessionOfClaudeCode(): string | undefined {
  const found = claudeCodeSessionId(process.env);
  if (found === undefined) return undefined;
  if ('ignored' in found) {
    process.stderr.write(`durable-bash: ${found.ignored}\n`);
    return undefined;
  }
  return found.sessionId;
}

function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

/** The rule policy the flags ask for; none when they give no rule and allow by default. */
function policyOf(flags: McpFlags): { policy?: PermissionPolicy } {
  const policy = textRulePolicy(flags);
  return policy === undefined ? {} : { policy };
}
