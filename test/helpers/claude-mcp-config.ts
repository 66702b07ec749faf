/** An `--mcp-config` value for claude that starts the built `durable-bash mcp` as its server `durable-bash`. */
import { CLI_BIN } from './cli.js';

/**
 * The JSON of one stdio server, `durable-bash`, running `durable-bash mcp` with `flags`;
 * `alwaysLoad` as durableBashOptions sets it (no deferred-tool hint after a failed call).
 */
export function durableBashMcpConfig(flags: string[], options: { alwaysLoad?: boolean } = {}): string {
  return JSON.stringify({
    mcpServers: {
      'durable-bash': {
        command: process.execPath,
        args: [CLI_BIN, 'mcp', ...flags],
        ...(options.alwaysLoad === true ? { alwaysLoad: true } : {}),
      },
    },
  });
}
