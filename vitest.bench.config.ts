import { defineConfig } from 'vitest/config';
import { ensureRunDir } from './test/helpers/run-dir.js';

// bench/run.mjs sets the run directory and ends its networks itself; a direct vitest run does here.
const ownRunDir = !process.env.DURABLE_BASH_RUN_DIR;
ensureRunDir();

// The load and budget runs: minutes long, one file at a time so measurements do not share the two cores.
export default defineConfig({
  test: {
    include: ['bench/**/*.bench.ts'],
    // The budgets and the soak run the CLI's worker (its prebuilt bundle); many-reads bundles its own.
    globalSetup: process.env.BENCH_MODE
      ? ownRunDir
        ? ['bench/lib/run-dir-teardown.ts']
        : []
      : ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-runtime.ts'],
    fileParallelism: false,
    testTimeout: 30 * 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
