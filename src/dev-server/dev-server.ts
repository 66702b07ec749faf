import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributeNames } from '../shared/search-attributes.js';
import { dynamicConfigArgs, sqlitePragmaArgs } from './dynamic-config.js';
import {
  DEV_SERVER_HOST,
  orphanedDevServer,
  pickFreePort,
  portInUseMessage,
  portOwner,
  tryBind,
} from './ports.js';
import { ServerLog } from './server-log.js';

export interface DevServerOptions {
  /** gRPC port; 0 picks a free one (and a free UI port, unless `uiPort` is given). @default 7233 */
  port?: number;
  /** Web UI port; 0 picks a free one. @default 8233, or a free port when `port` is 0 */
  uiPort?: number;
  /** SQLite file that keeps the server's state across restarts. @default .durable-bash/temporal.db */
  dbFile?: string;
}

/** Where a dev server runs: fixed ports and an absolute database path, so a restart lands on the same. */
export interface DevServerPlace {
  port: number;
  uiPort: number;
  dbFile: string;
}

/** How the server process ended: its exit code, or the signal that ended it. */
export interface DevServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DevServer {
  address: string;
  uiAddress: string;
  place: DevServerPlace;
  process: ChildProcess;
  /** Settles when the server process exits, for whatever reason. */
  exited: Promise<DevServerExit>;
  /** Stops the server and waits for it to exit. */
  stop(): Promise<void>;
}

/** A dev server that could not start; the message is one line, meant for the user. */
export class DevServerStartError extends Error {
  override name = 'DevServerStartError';
  constructor(
    message: string,
    /** Set when the server process itself exited while it started. */
    readonly exit?: DevServerExit,
  ) {
    super(message);
  }
}

/** How long the dev server may take to answer after it starts. */
const DEV_SERVER_READY_MS = 60_000;

/** The ports (free ones picked for 0) and the absolute database path a server will run with. */
export async function resolveDevServerPlace(options: DevServerOptions = {}): Promise<DevServerPlace> {
  const requested = options.port ?? 7233;
  const port = requested === 0 ? await pickFreePort() : requested;
  const uiRequested = options.uiPort ?? (requested === 0 ? 0 : 8233);
  let uiPort = uiRequested === 0 ? await pickFreePort() : uiRequested;
  while (uiPort === port && uiRequested === 0) uiPort = await pickFreePort();
  if (uiPort === port) throw new DevServerStartError(`the gRPC port and the UI port are both ${port}`);
  const dbFile = path.resolve(options.dbFile ?? path.join('.durable-bash', 'temporal.db'));
  return { port, uiPort, dbFile };
}

/** How long an orphaned dev server gets to stop on SIGTERM before it is SIGKILLed. */
const ORPHAN_STOP_MS = 10_000;

/**
 * Stops the dev server an earlier `dev` left running on `place` (see `orphanedDevServer`) and
 * waits until it is gone; its pid, or undefined when there was none.
 */
export async function stopOrphanedDevServer(place: DevServerPlace): Promise<number | undefined> {
  const pid = orphanedDevServer(place.port, place.dbFile);
  if (pid === undefined) return undefined;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const gone = async (ms: number) => {
    for (const until = Date.now() + ms; Date.now() < until; ) {
      if (!alive()) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return !alive();
  };
  process.kill(pid, 'SIGTERM');
  if (!(await gone(ORPHAN_STOP_MS))) {
    process.kill(pid, 'SIGKILL');
    await gone(ORPHAN_STOP_MS);
  }
  return pid;
}

/** Fails with `port N is already in use (by pid P: ...)` if either port of `place` is taken. */
export async function assertPortsFree(place: DevServerPlace): Promise<void> {
  for (const port of [place.port, place.uiPort]) {
    const error = await tryBind(port);
    if (error === 'EADDRINUSE') throw new DevServerStartError(portInUseMessage(port));
    if (error) throw new DevServerStartError(`cannot use port ${port}: ${error}`);
  }
}

/**
 * Starts `temporal server start-dev` with durable-bash's search attributes and waits until it
 * answers. Fails (one line) if a port is taken, or if the server exits before it answers, with the
 * server's last stderr line: it never hands back someone else's server on the same port.
 */
export async function startDevServer(cliPath: string, options: DevServerOptions = {}): Promise<DevServer> {
  const place = await resolveDevServerPlace(options);
  await assertPortsFree(place);
  mkdirSync(path.dirname(place.dbFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    DEV_SERVER_HOST,
    '--port',
    String(place.port),
    '--ui-port',
    String(place.uiPort),
    '--db-filename',
    place.dbFile,
    '--log-level',
    'error',
    ...searchAttributeNames.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    ...dynamicConfigArgs(),
    ...sqlitePragmaArgs(),
  ];
  // Its stderr goes to a file, so it outlives a dev that is killed (see server-log.ts).
  const log = new ServerLog(`${place.dbFile}.log`);
  const child = spawn(cliPath, args, { stdio: ['ignore', 'ignore', log.fd] });
  log.close();
  const exited = new Promise<DevServerExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const address = `${DEV_SERVER_HOST}:${place.port}`;
  const server: DevServer = {
    address,
    uiAddress: `http://${DEV_SERVER_HOST}:${place.uiPort}`,
    place,
    process: child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  try {
    await waitUntilReachable(address, child, exited);
    // Whoever answered must be this child, not a server that took the port in the meantime.
    const owner = portOwner(place.port);
    if (owner && owner.pid !== child.pid) throw new DevServerStartError(portInUseMessage(place.port));
  } catch (err) {
    await server.stop();
    if (err instanceof ServerExitedError) {
      const how = describeExit(err.exit);
      const lastStderrLine = log.lastLine();
      throw new DevServerStartError(
        `the Temporal dev server exited during start-up (${how})${lastStderrLine ? `: ${lastStderrLine}` : ''}`,
        err.exit,
      );
    }
    throw err;
  }
  // Held back until the server answers (a failed start reports only its last line), then passed on.
  void exited.then(log.follow((text) => process.stderr.write(text)));
  return server;
}

/** `exit code 1`, or the signal's name. */
export function describeExit(exit: DevServerExit): string {
  return exit.signal ?? `exit code ${exit.code}`;
}

class ServerExitedError extends Error {
  constructor(readonly exit: DevServerExit) {
    super(`the Temporal dev server exited (${describeExit(exit)})`);
  }
}

async function waitUntilReachable(
  address: string,
  child: ChildProcess,
  exited: Promise<DevServerExit>,
): Promise<void> {
  const deadline = Date.now() + DEV_SERVER_READY_MS;
  let exit: DevServerExit | undefined;
  void exited.then((value) => {
    exit = value;
  });
  const gone = () =>
    exit ?? (child.exitCode !== null || child.signalCode !== null ? exitOf(child) : undefined);
  for (;;) {
    const before = gone();
    if (before) throw new ServerExitedError(before);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.close();
      const after = gone();
      if (after) throw new ServerExitedError(after);
      return;
    } catch (err) {
      if (err instanceof ServerExitedError) throw err;
      if (Date.now() > deadline)
        throw new DevServerStartError(`the Temporal dev server did not answer at ${address}: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function exitOf(child: ChildProcess): DevServerExit {
  return { code: child.exitCode, signal: child.signalCode };
}
