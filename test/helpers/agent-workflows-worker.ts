/** A worker of a test's own agent workflows (a user's, calling `durable-bash/workflow`), on a queue of its own. */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { bundlerOptions } from '../../src/worker/workflow-bundle.js';

export interface AgentWorkflowsWorker {
  taskQueue: string;
  stop(): Promise<void>;
}

/** Runs the workflows of `workflowsPath` until `stop()`. */
export async function startAgentWorkflows(
  env: TestWorkflowEnvironment,
  workflowsPath: string,
): Promise<AgentWorkflowsWorker> {
  const taskQueue = `agents-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowsPath,
    bundlerOptions,
  });
  const running = worker.run();
  return {
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}
