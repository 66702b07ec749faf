import { defineConfig } from 'vitest/config';
import { ensureRunDir } from './test/helpers/run-dir.js';

ensureRunDir();

// npm run test:cluster: test/cluster/*.cluster.ts (not *.test.ts, so `npm test` leaves them out),
// each file against its own production-shaped cluster (PostgreSQL + temporal-server,
// test/cluster/cluster-env.ts). One file at a time: a cluster is four Temporal services and a
// database on a 2-core machine.
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.cluster.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-runtime.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
    expect: { poll: { timeout: 15_000 } },
  },
});
