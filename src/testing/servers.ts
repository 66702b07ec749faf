/**
 * Temporal servers for tests, from the binaries durable-bash provisions offline
 * (`scripts/provision-temporal.sh`; docs/OFFLINE-SERVERS.md): the dev server with durable-bash's
 * search attributes and `durable-bash dev`'s settings, or the time-skipping test server. Under
 * CI=true a missing binary fails with the command that fixes it; it never downloads or skips.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { registerSearchAttributes } from '../client/register-search-attributes.js';
import { findTemporalBinary, provisionScript, TemporalBinary } from '../dev-server/binaries.js';
import {
  DEV_SERVER_DYNAMIC_CONFIG,
  dynamicConfigArgs,
  sqlitePragmaArgs,
} from '../dev-server/dynamic-config.js';
import { searchAttributeKeys } from '../shared/search-attributes.js';

function executable(binary: TemporalBinary) {
  const found = findTemporalBinary(binary);
  if (found.kind !== 'download') return { type: 'existing-path' as const, path: found.path };
  if (process.env.CI === 'true') {
    throw new Error(
      `no ${binary.file} binary (set ${binary.envVar}, or run: bash ${provisionScript}); CI never downloads or skips`,
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
 * A dev server (in memory unless `place.dbFilename`), with durable-bash's search attributes.
 * `DURABLE_BASH_TEST_ADDRESS` points it at a running server instead, unless the caller needs its
 * own `dynamicConfig` (lowered limits, say) or `place`. Call `teardown()` when done.
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
      searchAttributes: [...searchAttributeKeys],
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

/** A time-skipping test server, with durable-bash's search attributes registered. Call `teardown()` when done. */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: executable(TemporalBinary.testServer) },
  });
  await registerSearchAttributes(env.connection, env.namespace ?? 'default');
  return env;
}
