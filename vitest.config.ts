import { defineConfig } from 'vitest/config';
import { ensureRunDir } from './test/helpers/run-dir.js';

ensureRunDir();

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-runtime.ts'],
    // Each file starts its own Temporal server; two cores run two files at a time comfortably.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // A poll waits for something that will happen; on a loaded CI machine one round (a read
    // through Temporal, a CLI process) can alone take longer than vitest's default 1 s.
    expect: { poll: { timeout: 15_000 } },
  },
});
