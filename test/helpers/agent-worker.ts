/** An agent host's worker (where completion notices are delivered) run in the test's process. */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterEach } from 'vitest';
import { type AgentWorkerOptions, createAgentWorker } from '../../src/worker/agent-worker.js';
import type { RunningWorker } from './bash-worker.js';

/** Starts an agent worker on `options.taskQueue` of the test server, delivering into `options.agents`. */
export async function startAgentWorker(
  env: TestWorkflowEnvironment,
  options: Omit<AgentWorkerOptions, 'connection' | 'namespace'>,
): Promise<RunningWorker> {
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    ...options,
  });
  const running = worker.run();
  return {
    worker,
    taskQueue: options.taskQueue,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

/**
 * Agent workers for the calling file's tests, each stopped after the test that started it:
 * `start(options)` on the server `env()` names (read when called).
 */
export function useAgentWorkers(env: () => TestWorkflowEnvironment) {
  const running: RunningWorker[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((worker) => worker.stop()));
  });
  return {
    async start(options: Omit<AgentWorkerOptions, 'connection' | 'namespace'>): Promise<RunningWorker> {
      const worker = await startAgentWorker(env(), options);
      running.push(worker);
      return worker;
    },
  };
}
