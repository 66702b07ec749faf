/**
 * The tests' Temporal servers: durable-bash's public test kit (`durable-bash/testing`), so the
 * project's tests start their servers exactly as a user's tests would.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { type DevServer, DevServerStartError, startDevServer } from '../../src/dev-server/dev-server.js';
import { createDevServerEnv, createTimeSkippingEnv } from '../../src/testing/index.js';

export { createDevServerEnv, createTimeSkippingEnv, type DevServerPlace } from '../../src/testing/index.js';

/** A file's server: set before its tests, torn down after them. */
export interface TestServer {
  env: TestWorkflowEnvironment;
}

/** Gives the calling file its own dev server (`createDevServerEnv(...args)`). Read `env` inside hooks and tests. */
export function useDevServer(...args: Parameters<typeof createDevServerEnv>): TestServer {
  return useServer(() => createDevServerEnv(...args));
}

/** Gives the calling file its own time-skipping server. Read `env` inside hooks and tests. */
export function useTimeSkippingServer(): TestServer {
  return useServer(createTimeSkippingEnv);
}

function useServer(create: () => Promise<TestWorkflowEnvironment>): TestServer {
  const server = {} as TestServer;
  beforeAll(async () => {
    server.env = await create();
  });
  afterAll(async () => {
    await server.env?.teardown();
  });
  return server;
}

/**
 * The dev server `durable-bash dev` runs, on a database file: killed (`process.kill('SIGKILL')`),
 * it starts again on the same file and ports (`place`) with everything it held. The caller stops it.
 */
export async function startDevServerOnFile(place: {
  port?: number;
  uiPort?: number;
  dbFile: string;
}): Promise<DevServer> {
  const binary = findTemporalBinary(TemporalBinary.cli);
  if (binary.kind === 'download') throw new Error('no temporal binary: run npm run provision');
  for (let tries = 1; ; tries++) {
    try {
      return await startDevServer(binary.path, { port: 0, ...place });
    } catch (err) {
      // Besides the two ports of `place`, the server picks free ports for its own services (history,
      // matching, membership, metrics) as it starts, and another test's process can take one between
      // its pick and its bind: it then exits during start-up. Started again, it picks again.
      if (!(err instanceof DevServerStartError) || err.exit === undefined || tries === START_TRIES) throw err;
    }
  }
}

/** How often a server that exited during start-up is started again. */
const START_TRIES = 3;
