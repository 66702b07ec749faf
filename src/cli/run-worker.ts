import { NativeConnection } from '@temporalio/worker';
import type { ExecutorOptions } from '../activities/index.js';
import { firstLine } from '../client/connect.js';
import { TemporalUnreachableError } from '../errors.js';
import { createBashWorker } from '../worker/bash-worker.js';
import { installQuietRuntime } from './quiet-logger.js';

export interface WorkerTarget {
  address: string;
  namespace: string;
  taskQueue: string;
}

/**
 * Connects and runs a command worker until SIGINT/SIGTERM (the SDK's runtime turns those into a
 * graceful shutdown). `onReady` runs once the worker polls.
 */
export async function runWorker(
  target: WorkerTarget,
  executor: ExecutorOptions,
  onReady: () => void,
): Promise<void> {
  // The worker's retries while the server is away read `cannot reach Temporal at <address>`.
  installQuietRuntime().target = target.address;
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address: target.address });
  } catch (err) {
    throw new TemporalUnreachableError(target.address, firstLine(err));
  }
  try {
    const worker = await createBashWorker({
      connection,
      namespace: target.namespace,
      taskQueue: target.taskQueue,
      executor,
    });
    const running = worker.run();
    onReady();
    await running;
  } finally {
    await connection.close();
  }
}
