/**
 * A durable-bash worker as a Worker Deployment version (Worker Versioning, docs/OPERATIONS.md): the
 * SDK's options for one, and the check that keeps durable-bash's workflows auto-upgrading.
 */
import type { WorkerDeploymentOptions } from '@temporalio/worker';

/**
 * The options of a Worker Deployment version `name`/`buildId` for `createBashWorker` (and a
 * worker that carries the plugin): versioned, its workflows' default behavior auto-upgrade.
 */
export function deploymentVersion(name: string, buildId: string): WorkerDeploymentOptions {
  if (typeof name !== 'string' || name.trim() === '' || name.includes('.'))
    throw new TypeError(
      `invalid deployment name: expected a non-empty name without '.' (Temporal joins it to the build id with one), got ${JSON.stringify(name)}`,
    );
  if (typeof buildId !== 'string' || buildId.trim() === '')
    throw new TypeError(`invalid build id: expected a non-empty string, got ${JSON.stringify(buildId)}`);
  return {
    version: { deploymentName: name, buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: 'AUTO_UPGRADE',
  };
}

/**
 * Refuses deployment options under which durable-bash's workflows would be pinned: a task lives as
 * long as its command, on a host whose one worker is replaced in place, so a run pinned to the
 * version that started it would wait for workers that are gone (docs/OPERATIONS.md). They name no
 * behavior of their own (the server refuses one from a worker without versioning, which most run),
 * so the worker's default must be auto-upgrade; pin a workflow of your own with `setWorkflowOptions`.
 */
export function checkDeploymentOptions(options: WorkerDeploymentOptions | undefined): void {
  if (options?.useWorkerVersioning && options.defaultVersioningBehavior !== 'AUTO_UPGRADE')
    throw new TypeError(
      `durable-bash: a versioned worker of its workflows needs defaultVersioningBehavior 'AUTO_UPGRADE', got ${JSON.stringify(options.defaultVersioningBehavior)}: its tasks outlive a version's workers (pin workflows of your own with setWorkflowOptions)`,
    );
}
