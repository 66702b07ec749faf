import { defineConfig } from 'vitest/config';
import { ensureRunDir } from './test/helpers/run-dir.js';

ensureRunDir();

// npm run test:upgrade: test/upgrade/*.upgrade.ts (not *.test.ts, so `npm test` leaves them out):
// the last release's worker replaced by this tree's under running tasks. The release is built
// from the repository's history by scripts/build-release.sh (cached), so the file runs alone.
export default defineConfig({
  test: {
    include: ['test/upgrade/**/*.upgrade.ts'],
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
