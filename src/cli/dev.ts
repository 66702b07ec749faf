import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { declaredRoots, workerHome } from '../command-host/containment/session-workdir.js';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import {
  assertPortsFree,
  type DevServer,
  type DevServerExit,
  type DevServerOptions,
  DevServerStartError,
  describeExit,
  resolveDevServerPlace,
  startDevServer,
  stopOrphanedDevServer,
} from '../dev-server/dev-server.js';
import { provisionDev } from '../dev-server/provision.js';
import type { HttpListen } from '../mcp/http.js';
import { isSessionsApartUnavailableError } from '../shared/errors.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { type BashWorker, type BashWorkerOptions, createBashWorker } from '../worker/bash-worker.js';
import { installQuietRuntime } from './quiet-logger.js';

export interface DevFlags extends DevServerOptions {
  taskQueue: string;
  /** Where the worker serves Prometheus metrics, if anywhere. */
  metrics?: HttpListen;
}

/**
 * What `dev` adds to the worker's options: the directory it starts in is a declared workdir root
 * (the README's examples run there), unless `--workdir-root` names others; and the dev server's
 * database, in that directory by default, is hidden from sessions (it holds every task).
 */
export function devExecutorOptions(executor: ExecutorOptions, dbFile: string): ExecutorOptions {
  const db = path.resolve(dbFile);
  return {
    ...executor,
    workdirRoots: executor.workdirRoots ?? [process.cwd()],
    sandboxHidden: [...(executor.sandboxHidden ?? []), ...SQLITE_SUFFIXES.map((suffix) => `${db}${suffix}`)],
  };
}

/** The files SQLite keeps a database in: the file, its write-ahead log, its shared memory, its journal. */
const SQLITE_SUFFIXES = ['', '-wal', '-shm', '-journal'];

/** `dev` gives up when its server dies this many times within RESTART_WINDOW_MS. */
export const MAX_EXITS_IN_WINDOW = 3;
/** The window those exits are counted in: a server that dies three times a minute will not recover by restarts. */
const RESTART_WINDOW_MS = 60_000;

/**
 * `durable-bash dev`: a local Temporal dev server (state kept in a file), the search attributes,
 * and a command worker, until Ctrl-C stops them all. A server that dies under it is restarted on
 * the same database and ports (the worker reconnects by itself); one that keeps dying stops `dev`.
 */
export async function runDev(
  flags: DevFlags,
  executor: ExecutorOptions,
  dataConverter?: DataConverter,
): Promise<void> {
  const log = (line: string) => process.stderr.write(`durable-bash: ${line}\n`);
  // Before anything starts: a root dev may not declare (its home, /) stops it in one line.
  declaredRoots(executor.workdirRoots ?? [], workerHome());
  const cli = provisionDev(executor, log);
  // Fixed once: a restart uses the same ports (even picked ones) and the same database file.
  const place = await resolveDevServerPlace(flags);
  // A dev that was SIGKILLed left its server running on this file and port: stop it, and say so.
  const orphan = await stopOrphanedDevServer(place);
  if (orphan !== undefined)
    log(
      `stopped the Temporal dev server (pid ${orphan}) that an earlier dev left running on ${shownPath(place.dbFile)}`,
    );
  await assertPortsFree(place);

  // Ctrl-C on a terminal signals the server too: its exit then is no reason to restart it. Once
  // only, so a second Ctrl-C still ends the process at once.
  let stopping = false;
  const onSignal = () => {
    stopping = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const forgetSignals = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };

  log('starting the Temporal dev server');
  let server: DevServer;
  try {
    server = await startDevServer(cli, place);
  } catch (err) {
    forgetSignals();
    if (!stopping) throw err;
    log('stopped');
    return;
  }
  // The finally below stops the server on every normal way out; this covers an abrupt exit.
  const onExit = () => server.process.kill('SIGTERM');
  process.once('exit', onExit);

  let fatal: string | undefined;
  let watching: Promise<void> = Promise.resolve();
  try {
    if (stopping) return;
    // Installed now, not earlier: its log forwarding keeps the process alive until it shuts down,
    // which it does once the worker and the connection below are gone.
    const logger = installQuietRuntime({ metrics: flags.metrics });
    logger.target = server.address;
    const connection = await NativeConnection.connect({ address: server.address });
    try {
      const worker = await createDevWorker(
        { connection, taskQueue: flags.taskQueue, executor, ...(dataConverter ? { dataConverter } : {}) },
        log,
      );
      const running = worker.run();

      /** Restarts the server each time it exits unexpectedly; stops the worker when that fails. */
      const watch = async (): Promise<void> => {
        const exits: number[] = [];
        // A restarted server that dies while it starts is one more exit, not a failure to restart.
        let diedStarting: DevServerExit | undefined;
        for (;;) {
          const exit = diedStarting ?? (await server.exited);
          diedStarting = undefined;
          if (stopping) return;
          const now = Date.now();
          exits.push(now);
          const recent = exits.filter((at) => now - at < RESTART_WINDOW_MS).length;
          if (recent >= MAX_EXITS_IN_WINDOW) {
            fatal = `the Temporal dev server exited ${recent} times within a minute (last: ${describeExit(exit)}); stopping`;
            break;
          }
          logger.expectOutage();
          log(
            `the Temporal dev server exited unexpectedly (${describeExit(exit)}); restarting it on ${shownPath(place.dbFile)}`,
          );
          try {
            server = await startDevServer(cli, place);
          } catch (err) {
            if (stopping) return;
            const message = err instanceof Error ? err.message : String(err);
            if (err instanceof DevServerStartError && err.exit !== undefined) {
              diedStarting = err.exit;
              continue;
            }
            fatal = `could not restart the Temporal dev server: ${message}`;
            break;
          }
          if (stopping) return;
          logger.reachable();
        }
        // Said last, once the worker and the server have stopped (the finally below): what the
        // worker's shutdown logs must not follow the reason dev gives for it.
        worker.shutdown();
      };
      watching = watch();
      // A signal that came while the worker was being created: the SDK's own handler was not there yet.
      if (stopping) worker.shutdown();

      const runFlags = [
        server.address === '127.0.0.1:7233' ? '' : ` --address ${server.address}`,
        flags.taskQueue === DEFAULT_TASK_QUEUE ? '' : ` --task-queue ${flags.taskQueue}`,
      ].join('');
      process.stdout.write(
        [
          'durable-bash dev is running',
          `  Temporal gRPC:  ${server.address}`,
          `  Temporal UI:    ${server.uiAddress}`,
          `  task queue:     ${flags.taskQueue}`,
          `  ${worker.containment}`,
          `  try:            ${selfInvocation()} run${runFlags} -- 'echo hi; echo err >&2; exit 3'`,
          'Ctrl-C stops the worker and the server.',
          '',
        ].join('\n'),
      );
      await running;
    } finally {
      await connection.close();
    }
  } finally {
    stopping = true;
    await server.stop();
    // A restart under way finishes (and sees `stopping`) first; the server it started is stopped too.
    await watching.catch(() => undefined);
    await server.stop();
    forgetSignals();
    process.off('exit', onExit);
    if (fatal === undefined) log('stopped');
    else {
      log(fatal);
      process.exitCode = 1;
    }
  }
}

/**
 * `dev`'s command worker. Where sessions cannot be kept apart and no mode but the default was asked
 * for, `dev` alone goes on without them, saying why in one line, and its start line says what that
 * leaves open: it is the one-command start on a developer's own machine. `worker` refuses instead.
 */
async function createDevWorker(
  options: BashWorkerOptions & { executor: ExecutorOptions },
  log: (line: string) => void,
): Promise<BashWorker> {
  try {
    return await createBashWorker(options);
  } catch (err) {
    if (!isSessionsApartUnavailableError(err) || options.executor.isolation === 'session') throw err;
    log(
      `sessions cannot be kept apart on this host: ${err.reason}; dev runs commands without isolation, as with --isolation none`,
    );
    return createBashWorker({ ...options, executor: { ...options.executor, isolation: 'none' } });
  }
}

/** The database path as the user would type it: relative when under the working directory. */
function shownPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/** How the user can call this CLI again: the installed bin, or node with this script's path. */
function selfInvocation(): string {
  const script = process.argv[1] ?? '';
  if (path.basename(script) !== 'main.js') return 'durable-bash';
  return `node ${path.relative(process.cwd(), script) || script}`;
}
