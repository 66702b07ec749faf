import { defineConfig } from 'vitest/config';
import suite from './vitest.config.js';

/**
 * The framework entry points' tests (test/frameworks/), which need Node.js 22+: `npm test` runs
 * them after the suite, under the provisioned Node.js 24 (scripts/run-tests.mjs), and
 * `npm run test:frameworks` alone. The suite's set-up and timeouts; `ai` is AI SDK 7 itself.
 */
export default defineConfig({
  test: {
    ...suite.test,
    include: ['test/frameworks/**/*.test.ts'],
    exclude: suite.test?.exclude?.filter((pattern) => pattern !== 'test/frameworks/**'),
    provide: { aiSdkMajor: 7 },
  },
});
