import { existsSync } from 'node:fs';
import { type NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { createCommandActivities, type ExecutorOptions } from '../activities/index.js';
import { HEARTBEAT_INTERVAL_MS, STICKY_QUEUE_TIMEOUT_MS } from '../shared/limits.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { bundlerOptions, prebuiltBundlePath, workflowsPath } from './workflow-bundle.js';

export interface BashWorkerOptions {
  connection: NativeConnection;
  /** @default 'default' */
  namespace?: string;
  /** @default DEFAULT_TASK_QUEUE ('durable-bash') */
  taskQueue?: string;
  /** How commands run: timeouts, default workdir, output limit, spill directory. */
  executor?: ExecutorOptions;
  /**
   * Commands (background ones included) this worker runs at once.
   * @default 2000
   */
  maxConcurrentCommands?: number;
  /**
   * A prebuilt workflow bundle (see `bundleWorkflows`).
   * @default the bundle `npm run build` writes (dist/workflows/bundle.js); else bundled on creation
   */
  workflowBundle?: WorkflowBundleOption;
  /** @default Temporal's `<pid>@<hostname>` */
  identity?: string;
}

/** A Temporal worker that runs the `bashTask` workflow and the command activities on one task queue. */
export function createBashWorker(options: BashWorkerOptions): Promise<Worker> {
  const prebuilt = prebuiltBundlePath();
  const workflows = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : existsSync(prebuilt)
      ? { workflowBundle: { codePath: prebuilt } }
      : { workflowsPath: workflowsPath(), bundlerOptions };
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue,
    activities: createCommandActivities(options.executor ?? {}, taskQueue),
    ...workflows,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentCommands ?? 2000,
    // Heartbeats carry live output and bring back cancellations, so they are not held back.
    maxHeartbeatThrottleInterval: HEARTBEAT_INTERVAL_MS,
    // A crashed worker's cached workflows (an output reader among them) wait this long on its
    // sticky queue before any worker may take them; reads wait only a few seconds.
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_TIMEOUT_MS,
    ...(options.identity ? { identity: options.identity } : {}),
  });
}
