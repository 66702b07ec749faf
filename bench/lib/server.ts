/**
 * The Temporal server a benchmark run measures on: a dev server in memory, a dev server on a
 * database file (what `npm start` runs), or the PostgreSQL-backed cluster of
 * test/cluster/cluster-env.ts. Every kind exports Prometheus metrics, read for the server-cost
 * figures.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import { registerSearchAttributes } from '../../src/client/register-search-attributes.js';
import { pickFreePort } from '../../src/dev-server/ports.js';
import { createDevServerEnv } from '../../test/helpers/temporal-env.js';

export type ServerKind = 'memory' | 'file' | 'cluster';

export interface BenchServer {
  kind: ServerKind;
  /** One line for the report: what the server is and how it stores. */
  description: string;
  address: string;
  namespace: string;
  metricsUrl: string;
  client: Client;
  nativeConnection: NativeConnection;
  /** The server's own version (GetSystemInfo). */
  version: string;
  stop(): Promise<void>;
}

/** What test/cluster/cluster-env.ts exports (only what the bench uses). */
interface ClusterModule {
  startCluster(): Promise<{
    address: string;
    namespace: string;
    metricsUrl: string;
    stop(): Promise<void>;
  }>;
}

export const CLUSTER_ENV = path.resolve('test/cluster/cluster-env.ts');

export async function startBenchServer(kind: ServerKind): Promise<BenchServer> {
  if (kind === 'cluster') return startClusterServer();
  const metricsPort = await pickFreePort();
  const dir = kind === 'file' ? mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bench-db-')) : undefined;
  const dbFilename = dir ? path.join(dir, 'temporal.db') : undefined;
  // The settings `durable-bash dev` runs with (its SQLite pragmas on a file), and Prometheus.
  const env = await createDevServerEnv({}, { metricsPort, ...(dbFilename ? { dbFilename } : {}) });
  return {
    kind,
    description:
      kind === 'file'
        ? 'dev server on a database file (SQLite, as `npm start` runs it)'
        : 'dev server, in memory',
    address: env.address,
    namespace: env.namespace ?? 'default',
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    client: env.client,
    nativeConnection: env.nativeConnection,
    version: await serverVersion(env.client),
    async stop() {
      await env.teardown();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startClusterServer(): Promise<BenchServer> {
  if (!existsSync(CLUSTER_ENV)) {
    throw new Error(
      `--server cluster needs ${path.relative(process.cwd(), CLUSTER_ENV)} (startCluster()), which is not in this tree`,
    );
  }
  const { startCluster } = (await import(pathToFileURL(CLUSTER_ENV).href)) as ClusterModule;
  const cluster = await startCluster();
  try {
    const env = await TestWorkflowEnvironment.createFromExistingServer({
      address: cluster.address,
      namespace: cluster.namespace,
    });
    await registerSearchAttributes(env.connection, cluster.namespace);
    return {
      kind: 'cluster',
      description: 'PostgreSQL-backed cluster (test/cluster/cluster-env.ts)',
      address: cluster.address,
      namespace: cluster.namespace,
      metricsUrl: cluster.metricsUrl,
      client: env.client,
      nativeConnection: env.nativeConnection,
      version: await serverVersion(env.client),
      async stop() {
        await env.teardown();
        await cluster.stop();
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** The server's version; a frontend that just started may not answer yet, so a few tries. */
async function serverVersion(client: Client): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const info = await client.workflowService.getSystemInfo({});
      return info.serverVersion || 'unknown';
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return 'unknown';
}
