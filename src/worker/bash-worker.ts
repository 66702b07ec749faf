import { existsSync } from 'node:fs';
import { Client, type DataConverter } from '@temporalio/client';
import {
  type NativeConnection,
  Worker,
  type WorkerStatus,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import {
  type AttachedTasks,
  compileExecutorOptions,
  createCommandActivities,
  type ExecutorOptions,
} from '../activities/index.js';
import { ensurePrivateDir } from '../activities/spill-files.js';
import { assertSupervisorBinary, supervisorPath } from '../activities/supervisor.js';
import { SupervisorNursery } from '../activities/supervisor-nursery.js';
import {
  CLOSED_RUN_CHECK_INTERVAL_MS,
  CONTROL_ACTIVITY_SLOTS,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  HEARTBEAT_THROTTLE_MS,
  HEARTBEAT_TIMEOUT_MS,
  ORPHAN_SCAN_INTERVAL_MS,
  STICKY_QUEUE_TIMEOUT_MS,
} from '../shared/limits.js';

/** How soon the start's scan is repeated when the server did not answer for some task. */
const STARTUP_SCAN_RETRY_MS = 1_000;

import { controlTaskQueue, DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { checkClosedRuns } from './closed-runs.js';
import { scanSupervisors, taskRunsOf } from './orphan-scan.js';
import { bundlerOptions, prebuiltBundlePath, workflowsPath } from './workflow-bundle.js';

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
}

type WorkerState = ReturnType<Worker['getState']>;

/**
 * A command worker: the `bashTask` workflow and the command activities on the task queue, the
 * command activities again on this host's own queue (`<task queue>@<host id>`), where every attempt
 * and re-attach of a command started here goes, and its reads, stops, stdin writes and releases on
 * the host's control queue (`<host queue>/control`), whose slots running commands never take. It
 * also ends the commands of tasks that closed while no worker was here (at start, then every minute).
 */
export class BashWorker {
  private scanTimer: NodeJS.Timeout | undefined;
  private closedRunTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly queueWorker: Worker,
    private readonly hostWorker: Worker,
    /** The host's control queue: reads, stops, stdin writes and releases, with slots of their own. */
    private readonly controlWorker: Worker,
    private readonly scan: (failStaleAttempts: boolean) => Promise<boolean>,
    /** Tells the attempts whose run closed (see `checkClosedRuns`). */
    private readonly checkClosedRuns: () => Promise<unknown>,
    /** This host's identity and its own task queue. */
    readonly hostId: string,
    readonly hostQueue: string,
    /** One line saying how tasks are contained on this host and which limits hold (say it at start). */
    readonly containment: string,
    /** Starts this worker's supervisors; let go of when the worker stops. */
    private readonly nursery?: SupervisorNursery,
  ) {}

  /** Runs until `shutdown()` (or SIGINT/SIGTERM, through the SDK's runtime), or until either queue's worker fails. */
  async run(): Promise<void> {
    this.nursery?.warmUp();
    void this.scanAtStart();
    this.scanTimer = setInterval(() => void this.scan(false).catch(() => undefined), ORPHAN_SCAN_INTERVAL_MS);
    this.scanTimer.unref();
    let checking = false;
    this.closedRunTimer = setInterval(() => {
      if (checking) return; // A slow server: one check at a time.
      checking = true;
      this.checkClosedRuns()
        .catch(() => undefined) // Asked again at the next tick.
        .finally(() => {
          checking = false;
        });
    }, CLOSED_RUN_CHECK_INTERVAL_MS);
    this.closedRunTimer.unref();
    try {
      await Promise.all(
        [this.queueWorker, this.hostWorker, this.controlWorker].map((worker) =>
          worker.run().catch((err: unknown) => {
            this.shutdown();
            throw err;
          }),
        ),
      );
    } finally {
      clearInterval(this.scanTimer);
      clearInterval(this.closedRunTimer);
      await this.nursery?.close();
    }
  }

  /**
   * The start's scan, repeated every STARTUP_SCAN_RETRY_MS while the server does not answer for
   * some task (it may be down too), for at most HEARTBEAT_TIMEOUT_MS: after that the attempts a
   * crashed worker left have timed out anyway.
   */
  private async scanAtStart(): Promise<void> {
    const until = Date.now() + HEARTBEAT_TIMEOUT_MS;
    while (this.getState() !== 'STOPPING' && this.getState() !== 'STOPPED' && Date.now() < until) {
      if (await this.scan(true).catch(() => false)) return;
      await new Promise((resolve) => setTimeout(resolve, STARTUP_SCAN_RETRY_MS).unref());
    }
  }

  /** Stops polling; commands keep running under their supervisors for the next worker to re-attach. */
  shutdown(): void {
    for (const worker of [this.queueWorker, this.hostWorker, this.controlWorker]) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  }

  getState(): WorkerState {
    return this.queueWorker.getState();
  }

  /** Both queues' workers: what they poll and hold in flight (an activity a shutdown waits for shows here). */
  getStatus(): { queue: WorkerStatus; host: WorkerStatus; control: WorkerStatus } {
    return {
      queue: this.queueWorker.getStatus(),
      host: this.hostWorker.getStatus(),
      control: this.controlWorker.getStatus(),
    };
  }
}

/** Creates a command worker (see `BashWorker`); fails at once if the supervisor binary is missing. */
export async function createBashWorker(options: BashWorkerOptions): Promise<BashWorker> {
  assertSupervisorBinary();
  const prebuilt = prebuiltBundlePath();
  const workflows = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : existsSync(prebuilt)
      ? { workflowBundle: { codePath: prebuilt } }
      : { workflowsPath: workflowsPath(), bundlerOptions };
  const namespace = options.namespace ?? 'default';
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const config = compileExecutorOptions(options.executor ?? {}, taskQueue);
  await ensurePrivateDir(config.spillDir);
  const dataConverter = options.dataConverter ? { dataConverter: options.dataConverter } : {};
  const client = new Client({ connection: options.connection, namespace, ...dataConverter });
  const runs = taskRunsOf(client);
  const attached: AttachedTasks = new Map();
  const nursery = SupervisorNursery.serves(config.containment.limits, config.sandbox !== undefined)
    ? new SupervisorNursery({
        binary: supervisorPath(),
        cgroupParents: config.containment.cgroupParents,
        limits: config.containment.limits,
        warm: config.warmSupervisors,
      })
    : undefined;
  const activities = createCommandActivities(config, runs, attached, nursery);
  const common = {
    connection: options.connection,
    namespace,
    activities,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentCommands ?? 2000,
    // The command activity paces its own heartbeats (a minute apart, and one after a read that
    // found new output); the SDK sends each as it comes, at most one a second.
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    ...(options.identity ? { identity: options.identity } : {}),
    ...dataConverter,
  };
  const queueWorker = await Worker.create({
    ...common,
    taskQueue,
    ...workflows,
    // A crashed worker's cached workflows (an output reader among them) wait this long on its
    // sticky queue before any worker may take them; reads wait only a few seconds.
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_TIMEOUT_MS,
    maxCachedWorkflows: options.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
  });
  const hostWorker = await Worker.create({ ...common, taskQueue: config.hostQueue });
  const { readOutput, stopCommand, writeStdin, releaseCommand } = activities;
  const controlWorker = await Worker.create({
    ...common,
    taskQueue: controlTaskQueue(config.hostQueue),
    activities: { readOutput, stopCommand, writeStdin, releaseCommand },
    maxConcurrentActivityTaskExecutions: CONTROL_ACTIVITY_SLOTS,
  });
  const scan = (failStaleAttempts: boolean) =>
    scanSupervisors({
      spillDir: config.spillDir,
      namespace,
      hostQueue: config.hostQueue,
      client,
      runs,
      attached,
      failStaleAttempts,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
    });
  return new BashWorker(
    queueWorker,
    hostWorker,
    controlWorker,
    scan,
    () => checkClosedRuns(client, attached),
    config.hostId,
    config.hostQueue,
    [config.containment.summary, ...(config.sandbox ? [config.sandbox.summary] : [])].join('; '),
    nursery,
  );
}
