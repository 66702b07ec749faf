import type { Command } from 'commander';
import type { HttpListen } from '../mcp/http.js';
import { parseHttpListen } from './listen-address.js';

export interface MetricsFlags {
  metricsPort?: HttpListen;
}

/** Adds `--metrics-port` to a command that runs a worker (names: docs/OPERATIONS.md). */
export function withMetricsOption(command: Command): Command {
  return command.option(
    '--metrics-port <[host:]port>',
    "serve Prometheus metrics on http://host:port/metrics (host: 127.0.0.1): the SDK runtime's and durable-bash's",
    parseHttpListen,
  );
}
