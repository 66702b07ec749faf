/**
 * One factory for every test file's Temporal server: the dev server (with durable-bash's search
 * attributes) or the time-skipping test server, from the provisioned binaries. Under CI=true a
 * missing binary fails the run with the command that fixes it; it never falls back or skips.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { registerSearchAttributes } from '../../src/client/search-attributes.js';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { DEV_SERVER_DYNAMIC_CONFIG, dynamicConfigArgs } from '../../src/dev-server/dynamic-config.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../../src/shared/search-attributes.js';

function executable(binary: TemporalBinary) {
  const found = findTemporalBinary(binary);
  if (found.kind !== 'download') return { type: 'existing-path' as const, path: found.path };
  if (process.env.CI === 'true') {
    throw new Error(
      `no ${binary.file} binary (set ${binary.envVar}, or run: npm run provision); CI never downloads or skips`,
    );
  }
  return { type: 'cached-download' as const };
}

/**
 * A dev server for this test file; `DURABLE_BASH_TEST_ADDRESS` points tests at a running one instead
 * (unless the test needs its own `dynamicConfig`, e.g. lowered limits).
 */
export async function createDevServerEnv(
  dynamicConfig: Readonly<Record<string, number>> = {},
): Promise<TestWorkflowEnvironment> {
  const address = process.env.DURABLE_BASH_TEST_ADDRESS;
  if (address && Object.keys(dynamicConfig).length === 0) {
    return TestWorkflowEnvironment.createFromExistingServer({ address, namespace: 'default' });
  }
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: executable(TemporalBinary.cli),
      searchAttributes: [ownerSearchAttribute, statusSearchAttribute],
      // The same server settings `durable-bash dev` uses.
      extraArgs: [
        '--log-level',
        'error',
        ...dynamicConfigArgs({ ...DEV_SERVER_DYNAMIC_CONFIG, ...dynamicConfig }),
      ],
    },
  });
}

/** A time-skipping test server for this test file, with durable-bash's search attributes registered. */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: executable(TemporalBinary.testServer) },
  });
  await registerSearchAttributes(env.connection, env.namespace ?? 'default');
  return env;
}
