import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import type { ExecutorOptions } from '../../src/activities/index.js';
import { createBashWorker } from '../../src/worker/bash-worker.js';

export interface RunningWorker {
  worker: Worker;
  taskQueue: string;
  /** Shuts the worker down and waits for it to stop. */
  stop(): Promise<void>;
}

/** Starts a command worker on a fresh task queue, with the run's shared workflow bundle. */
export async function startBashWorker(
  env: TestWorkflowEnvironment,
  executor: ExecutorOptions = {},
  taskQueue = `test-${randomUUID()}`,
): Promise<RunningWorker> {
  const worker = await createBashWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    executor,
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  const running = worker.run();
  return {
    worker,
    taskQueue,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
