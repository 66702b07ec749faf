import type { DataConverter } from '@temporalio/common';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import {
  type ConnectionConfig,
  resolveConnectionConfig,
  type TemporalTarget,
} from '../connection/connection-config.js';
import { connectNativeConnection } from '../connection/native-connection.js';
import type { HttpListen } from '../mcp/http.js';
import { createBashWorker } from '../worker/bash-worker.js';
import { deploymentVersion } from '../worker/deployment-version.js';
import { installQuietRuntime } from './quiet-logger.js';

export interface WorkerTarget extends TemporalTarget {
  taskQueue: string;
  /** Where to serve Prometheus metrics, if anywhere. */
  metrics?: HttpListen;
  /** Run the command queue's worker as this Worker Deployment version. */
  deployment?: { name: string; buildId: string };
}

/**
 * Connects and runs a command worker until SIGINT/SIGTERM (the SDK's runtime turns those into a
 * graceful shutdown). `onReady` runs once the worker polls, with where it connected.
 */
export async function runWorker(
  target: WorkerTarget,
  executor: ExecutorOptions,
  onReady: (config: ConnectionConfig) => void,
  dataConverter?: DataConverter,
): Promise<void> {
  // Checked before connecting: a bad name is said at once, not after the server answered.
  const versioned = target.deployment
    ? { workerDeploymentOptions: deploymentVersion(target.deployment.name, target.deployment.buildId) }
    : {};
  // The worker's retries while the server is away read `cannot reach Temporal at <address>`.
  const config = resolveConnectionConfig(target);
  installQuietRuntime({ metrics: target.metrics }).target = config.address;
  const connection = await connectNativeConnection(config);
  try {
    const worker = await createBashWorker({
      connection,
      namespace: config.namespace,
      taskQueue: target.taskQueue,
      executor,
      ...(dataConverter ? { dataConverter } : {}),
      ...versioned,
    });
    const running = worker.run();
    process.stderr.write(`durable-bash: ${worker.containment}\n`);
    onReady(config);
    await running;
  } finally {
    await connection.close();
  }
}
