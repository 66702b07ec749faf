import type { Logger, LogLevel, LogMetadata } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { HttpListen } from '../mcp/http.js';
import { prometheusMetrics } from '../worker/prometheus-metrics.js';
import { bindAddress } from './listen-address.js';

const SEVERITIES: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** What the SDK logs for a worker given no workflows (durable-bash's host and control workers). */
const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/** Core's line for a call it retries: `gRPC call <name> retried <n> times`. */
const RETRY_LINE = /^gRPC call \S+ retried \d+ times$/;

/** At most one "still cannot reach" line per this long. */
const OUTAGE_SUMMARY_INTERVAL_MS = 60_000;
/** A connection failure after this long without one starts a new outage (the last one ended). */
const OUTAGE_GAP_MS = 30_000;

/**
 * The SDK's logger for the CLI's workers. Core's own logs are forwarded to it (instead of core
 * writing them to stdout), and while the server is unreachable the pollers log a retry warning
 * several times a second: those collapse into one line when the outage starts, then at most one
 * `still cannot reach Temporal at ... (N retries)` a minute. Every other message passes through.
 */
export class QuietLogger implements Logger {
  /** The server's address, for the outage lines (else taken from the error text). */
  target: string | undefined;
  private readonly inner: DefaultLogger;
  private readonly severity: number;
  private outage: { retries: number; lastFailure: number; lastReport: number } | undefined;

  constructor(
    readonly level: LogLevel = 'WARN',
    private readonly write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
    private readonly now: () => number = Date.now,
  ) {
    this.inner = new DefaultLogger(level);
    this.severity = SEVERITIES.indexOf(level);
  }

  /**
   * The caller already said the server is down (dev restarting it): the outage's first line is not
   * printed; the per-minute summary still is if it lasts.
   */
  expectOutage(): void {
    const now = this.now();
    this.outage = { retries: 0, lastFailure: now, lastReport: now };
  }

  /** The server answers again: the next failure is a new outage, announced again. */
  reachable(): void {
    this.outage = undefined;
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (SEVERITIES.indexOf(level) < this.severity) return;
    // The host and control queues' workers run activities only, by design: not worth a warning.
    if (message === NO_WORKFLOWS_WARNING) return;
    const failure = connectionFailure(message, meta);
    if (failure === undefined) {
      this.inner.log(level, message, meta);
      return;
    }
    const now = this.now();
    const target = this.target ?? failure.address ?? 'its address';
    if (this.outage === undefined || now - this.outage.lastFailure > OUTAGE_GAP_MS) {
      this.outage = { retries: 1, lastFailure: now, lastReport: now };
      this.write(
        `durable-bash: cannot reach Temporal at ${target} (${failure.reason}); the worker keeps retrying`,
      );
      return;
    }
    this.outage.retries++;
    this.outage.lastFailure = now;
    if (now - this.outage.lastReport >= OUTAGE_SUMMARY_INTERVAL_MS) {
      this.outage.lastReport = now;
      this.write(`durable-bash: still cannot reach Temporal at ${target} (${this.outage.retries} retries)`);
    }
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * A log line about failing to reach the server (core's `gRPC call X retried N times` with an
 * Unavailable / connect error), with the error's innermost message and the address it names. Only
 * the retries: a line saying something was given up on (`Network error while completing
 * activity`: a result dropped) is no retry, and passes through.
 */
export function connectionFailure(
  message: string,
  meta?: LogMetadata,
): { reason: string; address: string | undefined } | undefined {
  if (!RETRY_LINE.test(message)) return undefined;
  const error = meta?.error === undefined ? '' : String(meta.error);
  const text = `${message} ${error}`;
  if (!/code: Unavailable|tcp connect error|Connection refused|transport error|connection reset/i.test(text))
    return undefined;
  const messages = [...error.matchAll(/message: "([^"]*)"/g)].map((match) => match[1]);
  const reason = messages.at(-1) || message;
  const address = /\b(\d{1,3}(?:\.\d{1,3}){3}:\d+|\[[0-9a-fA-F:]+\]:\d+)/.exec(error)?.[1];
  return { reason, address };
}

let installed: QuietLogger | undefined;

/**
 * Installs the SDK's runtime with a QuietLogger (core's logs forwarded to it), once per process, at
 * DURABLE_BASH_LOG_LEVEL (WARN by default: the SDK's INFO lines are noise on a terminal). Only for
 * commands that run a worker: the forwarding keeps the process alive until the runtime shuts
 * down, which it does once its last connection and worker are gone. With `metrics`, the runtime
 * serves Prometheus metrics there (see `prometheusMetrics`).
 */
export function installQuietRuntime(options: { level?: LogLevel; metrics?: HttpListen } = {}): QuietLogger {
  if (installed) return installed;
  const level = options.level ?? (process.env.DURABLE_BASH_LOG_LEVEL as LogLevel | undefined) ?? 'WARN';
  const logger = new QuietLogger(level);
  Runtime.install({
    logger,
    telemetryOptions: {
      logging: { filter: { core: level, other: 'ERROR' }, forward: {} },
      ...(options.metrics ? { metrics: prometheusMetrics(bindAddress(options.metrics)) } : {}),
    },
  });
  installed = logger;
  return logger;
}
