import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributeNames } from '../shared/search-attributes.js';
import { findTemporalBinary, provisionScript, TemporalBinary } from './binaries.js';
import { dynamicConfigArgs } from './dynamic-config.js';

export interface DevServerOptions {
  /** gRPC port. @default 7233 */
  port?: number;
  /** Web UI port. @default 8233 */
  uiPort?: number;
  /** SQLite file that keeps the server's state across restarts. @default .durable-bash/temporal.db */
  dbFile?: string;
}

export interface DevServer {
  address: string;
  uiAddress: string;
  process: ChildProcess;
  /** Stops the server and waits for it to exit. */
  stop(): Promise<void>;
}

/** How long the dev server may take to answer after it starts. */
const DEV_SERVER_READY_MS = 60_000;

/** The Temporal CLI, provisioned first (by the project's script) if no binary is found. */
export function ensureTemporalCli(log: (line: string) => void): string {
  let found = findTemporalBinary(TemporalBinary.cli);
  if (found.kind === 'download') {
    log(`no Temporal CLI found; provisioning with ${provisionScript}`);
    const result = spawnSync('bash', [provisionScript], { stdio: 'inherit' });
    if (result.status !== 0)
      throw new Error(`provisioning failed (exit ${result.status}); run: bash ${provisionScript}`);
    found = findTemporalBinary(TemporalBinary.cli);
  }
  if (found.kind === 'download')
    throw new Error(`no Temporal CLI after provisioning; run: bash ${provisionScript}`);
  return found.path;
}

/** Starts `temporal server start-dev` with durable-bash's search attributes and waits until it answers. */
export async function startDevServer(cliPath: string, options: DevServerOptions = {}): Promise<DevServer> {
  const port = options.port ?? 7233;
  const uiPort = options.uiPort ?? 8233;
  const dbFile = path.resolve(options.dbFile ?? path.join('.durable-bash', 'temporal.db'));
  mkdirSync(path.dirname(dbFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    dbFile,
    '--log-level',
    'error',
    ...searchAttributeNames.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    ...dynamicConfigArgs(),
  ];
  const child = spawn(cliPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const address = `127.0.0.1:${port}`;
  const server: DevServer = {
    address,
    uiAddress: `http://127.0.0.1:${uiPort}`,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  try {
    await waitUntilReachable(address, exited);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

async function waitUntilReachable(address: string, exited: Promise<void>): Promise<void> {
  const deadline = Date.now() + DEV_SERVER_READY_MS;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (;;) {
    if (gone) throw new Error('the Temporal dev server exited during start-up (is the port in use?)');
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.close();
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`the Temporal dev server did not answer at ${address}: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
