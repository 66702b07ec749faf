/**
 * One factory for every test file's Temporal server: the dev server (with durable-bash's search
 * attributes) or the time-skipping test server, from the provisioned binaries. Under CI=true a
 * missing binary fails the run with the command that fixes it; it never falls back or skips.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { registerSearchAttributes } from '../../src/client/register-search-attributes.js';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import {
  DEV_SERVER_DYNAMIC_CONFIG,
  dynamicConfigArgs,
  sqlitePragmaArgs,
} from '../../src/dev-server/dynamic-config.js';
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

/** Where a dev server keeps its state and what it exposes, beyond the settings `durable-bash dev` uses. */
export interface DevServerPlace {
  /** Its Prometheus endpoint (`http://127.0.0.1:<port>/metrics`), for what tasks cost the server. */
  metricsPort?: number;
  /** A SQLite file instead of memory, with the pragmas `durable-bash dev` runs it with. */
  dbFilename?: string;
}

/**
 * A dev server for this test file; `DURABLE_BASH_TEST_ADDRESS` points tests at a running one instead
 * (unless the test needs its own `dynamicConfig`, e.g. lowered limits, or its own `place`).
 */
export async function createDevServerEnv(
  dynamicConfig: Readonly<Record<string, number>> = {},
  place: DevServerPlace = {},
): Promise<TestWorkflowEnvironment> {
  const address = process.env.DURABLE_BASH_TEST_ADDRESS;
  if (address && Object.keys(dynamicConfig).length === 0 && Object.keys(place).length === 0) {
    return TestWorkflowEnvironment.createFromExistingServer({ address, namespace: 'default' });
  }
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: executable(TemporalBinary.cli),
      searchAttributes: [ownerSearchAttribute, statusSearchAttribute],
      ...(place.dbFilename ? { dbFilename: place.dbFilename } : {}),
      // The same server settings `durable-bash dev` uses.
      extraArgs: [
        '--log-level',
        'error',
        ...(place.metricsPort !== undefined ? ['--metrics-port', String(place.metricsPort)] : []),
        ...(place.dbFilename ? sqlitePragmaArgs() : []),
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
