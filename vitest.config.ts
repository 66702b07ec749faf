import { configDefaults, defineConfig } from 'vitest/config';
import { ensureRunDir } from './test/helpers/run-dir.js';

ensureRunDir();

/**
 * The suite, under the machine's Node.js (20 and later). test/frameworks/ needs Node.js 22+ and
 * has its own config (vitest.frameworks.config.ts), run by `npm test` under the provisioned 24.
 */
export default defineConfig({
  // `ai` is AI SDK 6 here (the devDependency `ai-v6`), in src and tests alike; the frameworks run
  // tests the same files against AI SDK 7, the devDependency `ai` itself.
  resolve: { alias: { ai: 'ai-v6' } },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'test/frameworks/**'],
    provide: { aiSdkMajor: 6 },
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
