import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, inject } from 'vitest';
import type { ExecutorOptions } from '../../src/activities/index.js';
import { type BashWorker, createBashWorker } from '../../src/worker/bash-worker.js';
import { createDevServerEnv } from './temporal-env.js';

export interface RunningWorker {
  /** A command worker, or (in the notice tests) an agent worker. */
  worker: BashWorker | Worker;
  taskQueue: string;
  /** Shuts the worker down and waits for it to stop. */
  stop(): Promise<void>;
}

/**
 * `DURABLE_BASH_TEST_SANDBOX=bwrap` runs every test worker's commands in the bubblewrap sandbox
 * (`npm run test:sandbox`): the normal tests, inside it.
 */
function sandboxFromEnv(): ExecutorOptions {
  if (process.env.DURABLE_BASH_TEST_SANDBOX !== 'bwrap') return {};
  // Not the test's cwd (the checkout): tests that give no workdir get a scratch one.
  return { sandbox: 'bwrap', defaultWorkdir: mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sandboxed-')) };
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
    executor: { ...sandboxFromEnv(), ...executor },
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

export interface DevServerWithWorker {
  env: TestWorkflowEnvironment;
  worker: RunningWorker;
}

/**
 * Gives the calling file (or describe block) its own dev server and a command worker on a fresh
 * task queue: started before its tests, stopped after. Read the fields inside hooks and tests.
 */
export function useDevServerWithWorker(
  options: { executor?: ExecutorOptions; dynamicConfig?: Readonly<Record<string, number>> } = {},
): DevServerWithWorker {
  const suite = {} as DevServerWithWorker;
  beforeAll(async () => {
    suite.env = await createDevServerEnv(options.dynamicConfig);
    suite.worker = await startBashWorker(suite.env, options.executor);
  });
  afterAll(async () => {
    await suite.worker?.stop();
    await suite.env?.teardown();
  });
  return suite;
}
