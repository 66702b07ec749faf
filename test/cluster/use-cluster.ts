/**
 * Gives a cluster test file its own production-shaped cluster (cluster-env.ts) and command worker
 * hosts run as users run them: `durable-bash worker` processes (the built CLI), each with its own
 * host id and spill directory. After the file: the workers stop, any command they left is ended,
 * the cluster stops, and the file fails if a process it started is still there.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll } from 'vitest';
import { isSameProcess, readRecord } from '../../src/command-host/supervisor/supervisor-records.js';
import { createBashTools } from '../../src/index.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { type Tools, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { type Cluster, type ClusterOptions, startCluster } from './cluster-env.js';

export interface Host {
  hostId: string;
  spillDir: string;
  worker: WorkerProcess;
}

export interface ClusterSuite {
  cluster: Cluster;
  /** A client on the cluster's default namespace (env.client), as the agent host has. */
  env: TestWorkflowEnvironment;
  /** The task queue every host's worker serves. */
  taskQueue: string;
  /** Starts `durable-bash worker` for a new host on the task queue. */
  startHost(): Promise<Host>;
  /** SIGKILLs the host's worker (its commands go on) and starts a new one with the same host id and spill directory. */
  restartHost(host: Host): Promise<void>;
  /** The model-facing tools on the task queue, as `createBashTools` makes them. */
  tools(): Tools;
}

export function useCluster(options: ClusterOptions = {}): ClusterSuite {
  const hosts: Host[] = [];
  const suite = { taskQueue: `cluster-${randomUUID()}` } as ClusterSuite;
  const startWorker = (hostId: string, spillDir: string) =>
    startWorkerProcess(suite.env, suite.taskQueue, [
      '--namespace',
      suite.cluster.namespace,
      '--host-id',
      hostId,
      '--spill-dir',
      spillDir,
    ]);
  suite.startHost = async () => {
    const hostId = `cluster-host-${randomUUID().slice(0, 8)}`;
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-cluster-spill-'));
    const host = { hostId, spillDir, worker: await startWorker(hostId, spillDir) };
    hosts.push(host);
    return host;
  };
  suite.restartHost = async (host) => {
    await host.worker.crash();
    host.worker = await startWorker(host.hostId, host.spillDir);
  };
  suite.tools = () => toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.taskQueue }));

  beforeAll(async () => {
    const startedAt = Date.now();
    suite.cluster = await startCluster(options);
    console.log(`cluster ready in ${Date.now() - startedAt}ms at ${suite.cluster.address}`);
    suite.env = await TestWorkflowEnvironment.createFromExistingServer({
      address: suite.cluster.address,
      namespace: suite.cluster.namespace,
    });
  });

  afterAll(async () => {
    const problems: string[] = [];
    for (const { worker } of hosts) {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) continue;
      const exited = once(worker.child, 'exit');
      worker.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      await worker.crash(); // SIGKILL if the graceful stop hung.
    }
    for (const { spillDir } of hosts) {
      await endLeftCommands(spillDir);
      const live = async () => (await supervisorsLeft(spillDir)).length === 0;
      let clean = false;
      for (let i = 0; i < 100 && !clean; i++) {
        clean = await live();
        if (!clean) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (!clean)
        problems.push(`supervisors still running in ${spillDir}: ${await supervisorsLeft(spillDir)}`);
      else rmSync(spillDir, { recursive: true, force: true });
    }
    await suite.env?.teardown();
    await suite.cluster?.stop();
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });

  return suite;
}

async function supervisorsLeft(spillDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of readdirSync(spillDir).filter((file) => file.endsWith('.state'))) {
    const record = await readRecord(path.join(spillDir, name));
    if (record !== undefined && !record.tombstone && isSameProcess(record, 'supervisor')) {
      pids.push(record.supervisorPid);
    }
  }
  return pids;
}
