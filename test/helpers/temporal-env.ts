/**
 * The tests' Temporal servers: durable-bash's public test kit (`durable-bash/testing`), so the
 * project's tests start their servers exactly as a user's tests would.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { type DevServer, startDevServer } from '../../src/dev-server/dev-server.js';
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
export function startDevServerOnFile(place: {
  port?: number;
  uiPort?: number;
  dbFile: string;
}): Promise<DevServer> {
  const binary = findTemporalBinary(TemporalBinary.cli);
  if (binary.kind === 'download') throw new Error('no temporal binary: run npm run provision');
  return startDevServer(binary.path, { port: 0, ...place });
}
