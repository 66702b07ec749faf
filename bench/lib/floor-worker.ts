/** Temporal's own floors (bench/floor/): their workflows bundled once, and a worker for them in this process. */
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkerOptions } from '@temporalio/worker';
import { bundlerOptions } from '../../src/worker/workflow-bundle.js';
import {
  heartbeatOnce,
  heartbeatUntilCancelled,
  resolveTrivially,
  spawnUntilCancelled,
  trivial,
} from '../floor/activities.js';
import type { BenchServer } from './server.js';

export type FloorBundle = { code: string };

/** The floors' workflows (bench/floor/workflows.ts), bundled as the bench's workers run them. */
export function bundleFloorWorkflows(): Promise<FloorBundle> {
  return bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../floor/workflows.ts', import.meta.url)),
    ...bundlerOptions,
    logger: new DefaultLogger('WARN'),
  });
}

/** A worker of the floors' workflows and activities on `taskQueue`, running; `extra` adds to its options. */
export async function startFloorWorker(
  server: BenchServer,
  taskQueue: string,
  workflowBundle: FloorBundle,
  extra: Partial<WorkerOptions> = {},
): Promise<{ worker: Worker; running: Promise<void> }> {
  const worker = await Worker.create({
    connection: server.nativeConnection,
    namespace: server.namespace,
    taskQueue,
    workflowBundle,
    activities: { trivial, heartbeatUntilCancelled, spawnUntilCancelled, resolveTrivially, heartbeatOnce },
    ...extra,
  });
  return { worker, running: worker.run() };
}
