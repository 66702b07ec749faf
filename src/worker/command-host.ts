/**
 * The host side of a command worker: the command activities, this host's own queue
 * (`<task queue>@<host id>`, where every attempt and re-attach of a command started here goes) and
 * its control queue (`<host queue>/control`: reads, stops, stdin writes and releases, with slots of
 * their own), the supervisors' nursery, and the scans that fail a crashed worker's stale attempts
 * and end the commands of tasks that closed while no worker was here. `createBashWorker` runs one
 * beside its task queue's worker; `durableBashPlugin` runs one beside a worker the user creates.
 */
import { Client, type DataConverter } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkerOptions, type WorkerStatus } from '@temporalio/worker';
import { type CommandActivities, createCommandActivities } from '../activities/index.js';
import { type ApprovalActivityFunctions, createApprovalActivities } from '../client/approved-runs.js';
import { AttachedTasks } from '../command-host/attached-tasks.js';
import {
  compileExecutorOptions,
  type ExecutorConfig,
  type ExecutorOptions,
} from '../command-host/executor-config.js';
import { setUpExecutor } from '../command-host/executor-setup.js';
import { ensurePrivateDir } from '../command-host/spill/spill-files.js';
import { assertSupervisorBinary, supervisorPath } from '../command-host/supervisor/supervisor.js';
import { SupervisorNursery } from '../command-host/supervisor/supervisor-nursery.js';
import { WorkspaceSweeper } from '../command-host/workspace/workspace-sweep.js';
import { connectionAddress } from '../connection/native-connection.js';
import {
  CLOSED_RUN_CHECK_INTERVAL_MS,
  CONTROL_ACTIVITY_SLOTS,
  HEARTBEAT_THROTTLE_MS,
  HEARTBEAT_TIMEOUT_MS,
  LOST_ATTEMPT_GRACE_MS,
  ORPHAN_SCAN_INTERVAL_MS,
} from '../shared/limits.js';
import { controlTaskQueue } from '../shared/task-queues.js';
import { createToolCallActivities, type ToolCallActivities } from '../tools/tool-call-activities.js';
import { checkClosedRuns } from './closed-runs.js';
import { resendLostEnds } from './lost-ends.js';
import { monitorSinkOf } from './monitor-sink.js';
import { scanSupervisors, taskRunsOf } from './orphan-scan.js';

/** How soon the start's scan is repeated when the server did not answer for some task. */
const STARTUP_SCAN_RETRY_MS = 1_000;

export interface CommandHostOptions {
  connection: NativeConnection;
  namespace: string;
  /** The command queue: where `bashTask` runs and a worker of it picks a command's host. */
  taskQueue: string;
  executor?: ExecutorOptions;
  /** @default 2000 */
  maxConcurrentCommands?: number;
  identity?: string;
  dataConverter?: DataConverter;
}

export class CommandHost {
  /** The command activities, for the command queue's worker too. */
  readonly activities: CommandActivities;
  /**
   * What the command queue's worker runs: the command activities, the tool calls of agent workflows
   * and the start of approved runs.
   */
  readonly queueActivities: CommandActivities & ToolCallActivities & ApprovalActivityFunctions;
  /** What every worker running command activities is created with: the host's and the command queue's. */
  readonly workerOptions: Pick<
    WorkerOptions,
    | 'connection'
    | 'namespace'
    | 'activities'
    | 'maxConcurrentActivityTaskExecutions'
    | 'maxHeartbeatThrottleInterval'
    | 'identity'
    | 'dataConverter'
  >;
  readonly hostId: string;
  readonly hostQueue: string;
  /** One line saying how tasks are contained on this host and which limits hold (say it at start). */
  readonly containment: string;
  private readonly config: ExecutorConfig;
  private readonly client: Client;
  private readonly runs: ReturnType<typeof taskRunsOf>;
  private readonly attached = new AttachedTasks();
  /** Tasks whose attempt this worker's scan failed, by when: their retry has yet to attach. */
  private readonly awaitingRetry = new Map<string, number>();
  private readonly nursery: SupervisorNursery | undefined;
  /** Removes the workspaces unused for the spill retention (docs/SANDBOXES.md, "Cleanup"). */
  private readonly workspaceSweeper: WorkspaceSweeper;
  private workers: Worker[] = [];
  private stopping = false;
  private scanTimer: NodeJS.Timeout | undefined;
  private scanning: Promise<boolean> | undefined;
  private closedRunTimer: NodeJS.Timeout | undefined;

  /** Synchronous, so a worker plugin can add the activities when the worker is configured. */
  constructor(private readonly options: CommandHostOptions) {
    assertSupervisorBinary();
    // As the SDK's Worker.create: the options compiled (defaults, checks), then the host probed
    // and its resources made (cgroups, the sandbox or sessions apart, with their supervisor copies);
    // sessions' networks refuse the addresses of the server this connection was made to.
    this.config = setUpExecutor(
      compileExecutorOptions(options.executor ?? {}, options.taskQueue),
      connectionAddress(options.connection),
    );
    this.client = new Client({
      connection: options.connection,
      namespace: options.namespace,
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    });
    this.runs = taskRunsOf(this.client);
    this.workspaceSweeper = new WorkspaceSweeper(this.config);
    this.nursery = SupervisorNursery.serves(this.config.containment.limits)
      ? new SupervisorNursery({
          binary: supervisorPath(),
          cgroupParents: this.config.containment.cgroupParents,
          limits: this.config.containment.limits,
          warm: this.config.warmSupervisors,
          spillDir: this.config.spillDir,
        })
      : undefined;
    this.activities = createCommandActivities(
      this.config,
      this.runs,
      this.attached,
      this.nursery,
      monitorSinkOf(this.client, options.taskQueue),
    );
    this.queueActivities = {
      ...this.activities,
      ...createToolCallActivities(this.client, options.taskQueue),
      ...createApprovalActivities(this.client, options.taskQueue),
    };
    this.workerOptions = {
      connection: options.connection,
      namespace: options.namespace,
      activities: this.activities,
      maxConcurrentActivityTaskExecutions: options.maxConcurrentCommands ?? 2000,
      // The command activity paces its own heartbeats (at attach, then minutes apart); the SDK sends
      // each as it comes, at most one a second.
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
      ...(options.identity ? { identity: options.identity } : {}),
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    };
    this.hostId = this.config.hostId;
    this.hostQueue = this.config.hostQueue;
    this.containment = [
      this.config.containment.summary,
      ...(this.config.sandbox ? [this.config.sandbox.summary] : []),
      ...(this.config.isolationSummary ? [this.config.isolationSummary] : []),
    ].join('; ');
  }

  /** Makes the spill directory and the host's two workers; call once, before `run`. */
  async prepare(): Promise<void> {
    await ensurePrivateDir(this.config.spillDir);
    const common = this.workerOptions;
    const { readOutput, stopCommand, writeStdin, releaseCommand, setMonitor } = this.activities;
    this.workers = [
      await Worker.create({ ...common, taskQueue: this.hostQueue }),
      await Worker.create({
        ...common,
        taskQueue: controlTaskQueue(this.hostQueue),
        activities: { readOutput, stopCommand, writeStdin, releaseCommand, setMonitor },
        maxConcurrentActivityTaskExecutions: CONTROL_ACTIVITY_SLOTS,
      }),
    ];
  }

  /** Runs the host's workers and scans until `shutdown()`, or until one of its workers fails. */
  async run(): Promise<void> {
    this.nursery?.warmUp();
    void this.scanAtStart();
    // Well within the heartbeat timeout, so an attempt lost on its way here is failed before it.
    const scanEveryMs = Math.min(ORPHAN_SCAN_INTERVAL_MS, this.config.heartbeatTimeoutMs / 5);
    this.scanTimer = setInterval(() => {
      if (!this.scanning) void this.scan(false).catch(() => undefined);
      // Sessions' networks with nothing of theirs running here any more end.
      void this.config.isolation?.sweep().catch(() => undefined);
      void this.workspaceSweeper.sweepIfDue().catch(() => undefined);
    }, scanEveryMs);
    this.scanTimer.unref();
    let checking = false;
    this.closedRunTimer = setInterval(() => {
      if (checking) return; // A slow server: one check at a time.
      checking = true;
      // Each asked again at the next tick when the server does not answer.
      Promise.all([
        checkClosedRuns(this.client, this.attached).catch(() => undefined),
        resendLostEnds(this.client, this.attached.reportedEnds, this.config.heartbeatTimeoutMs).catch(
          () => undefined,
        ),
      ]).finally(() => {
        checking = false;
      });
    }, CLOSED_RUN_CHECK_INTERVAL_MS);
    this.closedRunTimer.unref();
    try {
      await Promise.all(
        this.workers.map((worker) =>
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
      // The networks of sessions with nothing left running here end with the worker; the others
      // stay for the commands that outlive it (and the next worker's sweep).
      await this.config.isolation?.sweep().catch(() => undefined);
    }
  }

  /** Stops polling; commands keep running under their supervisors for the next worker to re-attach. */
  shutdown(): void {
    this.stopping = true;
    for (const worker of this.workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  /** The host's two workers: what they poll and hold in flight. */
  getStatus(): { host: WorkerStatus; control: WorkerStatus } {
    const [host, control] = this.workers;
    if (!host || !control) throw new Error('the command host is not prepared yet (call prepare())');
    return { host: host.getStatus(), control: control.getStatus() };
  }

  /**
   * The start's scan, repeated every STARTUP_SCAN_RETRY_MS while the server does not answer for
   * some task (it may be down too), for at most HEARTBEAT_TIMEOUT_MS: after that the attempts a
   * crashed worker left have timed out anyway.
   */
  private async scanAtStart(): Promise<void> {
    const until = Date.now() + HEARTBEAT_TIMEOUT_MS;
    const stopped = () => {
      const state = this.workers[0]?.getState();
      return this.stopping || state === 'STOPPING' || state === 'STOPPED';
    };
    while (!stopped() && Date.now() < until) {
      if (await this.scan(true).catch(() => false)) return;
      await new Promise((resolve) => setTimeout(resolve, STARTUP_SCAN_RETRY_MS).unref());
    }
  }

  /**
   * One scan at a time (a periodic one is skipped while another runs; the start's waits for it), and
   * none once the worker stops: a scan fails attempts by activity id, whichever is current, so two
   * at once could fail the retry the other one asked for, and a stopping worker's own attempts.
   */
  private async scan(failStaleAttempts: boolean): Promise<boolean> {
    while (this.scanning) await this.scanning.catch(() => undefined);
    if (this.stopping) return true;
    this.scanning = this.scanOnce(failStaleAttempts);
    try {
      return await this.scanning;
    } finally {
      this.scanning = undefined;
    }
  }

  private scanOnce(failStaleAttempts: boolean): Promise<boolean> {
    return scanSupervisors({
      spillDir: this.config.spillDir,
      namespace: this.options.namespace,
      hostQueue: this.hostQueue,
      client: this.client,
      attached: this.attached,
      awaitingRetry: this.awaitingRetry,
      failStaleAttempts,
      heartbeatTimeoutMs: this.config.heartbeatTimeoutMs,
      lostAttemptGraceMs: Math.min(LOST_ATTEMPT_GRACE_MS, this.config.heartbeatTimeoutMs / 10),
    });
  }
}
