import type { DataConverter } from '@temporalio/client';
import {
  type NativeConnection,
  Worker,
  type WorkerDeploymentOptions,
  type WorkerStatus,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import { DEFAULT_MAX_CACHED_WORKFLOWS, STICKY_QUEUE_TIMEOUT_MS } from '../shared/limits.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { CommandHost } from './command-host.js';
import { checkDeploymentOptions } from './deployment-version.js';
import { ourWorkflows } from './workflow-bundle.js';

export interface BashWorkerOptions {
  connection: NativeConnection;
  /** @default 'default' */
  namespace?: string;
  /** @default DEFAULT_TASK_QUEUE ('durable-bash') */
  taskQueue?: string;
  /** How commands run: timeouts, default workdir, output limit, spill directory, host identity. */
  executor?: ExecutorOptions;
  /**
   * Commands (background ones included) this worker runs at once.
   * @default 2000
   */
  maxConcurrentCommands?: number;
  /**
   * Workflows kept in this worker's cache (the SDK's own default grows with the heap limit: about
   * 2,300 on a 4 GiB heap, some 280 KiB each). A workflow beyond it is replayed from its history at
   * its next workflow task; an idle task has none until it ends. @default DEFAULT_MAX_CACHED_WORKFLOWS
   */
  maxCachedWorkflows?: number;
  /**
   * A prebuilt workflow bundle (see `bundleWorkflows`).
   * @default the bundle `npm run build` writes (dist/workflows/bundle.js); else bundled on creation
   */
  workflowBundle?: WorkflowBundleOption;
  /** @default Temporal's `<pid>@<hostname>` */
  identity?: string;
  /**
   * How payloads and failures are stored: `encryptingDataConverter(keyring)` encrypts them. Give
   * the tools' client the same one. @default Temporal's (plain JSON)
   */
  dataConverter?: DataConverter;
  /**
   * Runs the command queue's worker as a Worker Deployment version (Worker Versioning; the SDK's
   * own option, `deploymentVersion(name, buildId)` makes it), its default versioning behavior
   * auto-upgrade (`checkDeploymentOptions`). The host's own queues stay unversioned: they are the
   * host's, whatever version started its commands (docs/OPERATIONS.md, "Worker Versioning").
   * @default unversioned
   */
  workerDeploymentOptions?: WorkerDeploymentOptions;
}

type WorkerState = ReturnType<Worker['getState']>;

/**
 * A command worker: the `bashTask` workflow and the command activities on the task queue, beside
 * this host's side (`CommandHost`): the command activities again on the host's own queue
 * (`<task queue>@<host id>`), where every attempt and re-attach of a command started here goes, and
 * its reads, stops, stdin writes and releases on the host's control queue (`<host queue>/control`),
 * whose slots running commands never take. It also ends the commands of tasks that closed while no
 * worker was here (at start, then every minute).
 */
export class BashWorker {
  constructor(
    private readonly queueWorker: Worker,
    private readonly host: CommandHost,
  ) {}

  /** This host's identity and its own task queue. */
  get hostId(): string {
    return this.host.hostId;
  }

  get hostQueue(): string {
    return this.host.hostQueue;
  }

  /** One line saying how tasks are contained on this host and which limits hold (say it at start). */
  get containment(): string {
    return this.host.containment;
  }

  /** Runs until `shutdown()` (or SIGINT/SIGTERM, through the SDK's runtime), or until any of its workers fails. */
  async run(): Promise<void> {
    await Promise.all([
      this.queueWorker.run().catch((err: unknown) => {
        this.shutdown();
        throw err;
      }),
      this.host.run().catch((err: unknown) => {
        this.shutdown();
        throw err;
      }),
    ]);
  }

  /** Stops polling; commands keep running under their supervisors for the next worker to re-attach. */
  shutdown(): void {
    if (this.queueWorker.getState() === 'RUNNING') this.queueWorker.shutdown();
    this.host.shutdown();
  }

  getState(): WorkerState {
    return this.queueWorker.getState();
  }

  /** Every queue's worker: what they poll and hold in flight (an activity a shutdown waits for shows here). */
  getStatus(): { queue: WorkerStatus; host: WorkerStatus; control: WorkerStatus } {
    return { queue: this.queueWorker.getStatus(), ...this.host.getStatus() };
  }
}

/** Creates a command worker (see `BashWorker`); fails at once if the supervisor binary is missing. */
export async function createBashWorker(options: BashWorkerOptions): Promise<BashWorker> {
  checkDeploymentOptions(options.workerDeploymentOptions);
  const workflows = options.workflowBundle ? { workflowBundle: options.workflowBundle } : ourWorkflows();
  const namespace = options.namespace ?? 'default';
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const host = new CommandHost({ ...options, namespace, taskQueue });
  await host.prepare();
  const queueWorker = await Worker.create({
    ...host.workerOptions,
    activities: host.queueActivities,
    taskQueue,
    ...workflows,
    // A crashed worker's cached workflows (an output reader among them) wait this long on its
    // sticky queue before any worker may take them; reads wait only a few seconds.
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_TIMEOUT_MS,
    maxCachedWorkflows: options.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    ...(options.workerDeploymentOptions ? { workerDeploymentOptions: options.workerDeploymentOptions } : {}),
  });
  return new BashWorker(queueWorker, host);
}
