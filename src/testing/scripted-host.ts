/**
 * A command host that plays scripts instead of running commands, for time-skipping tests of agent
 * logic (docs/TESTING.md). Only the host's command activities are scripted (run, stop, read,
 * stdin, a monitor's matches; see scripted-runs.ts), and a person's decision on an approval
 * request can be played (`decide`): the `bashTask` workflow, the reader, the
 * tools, the client, the tool calls of agent workflows, resolving a command and picking its host
 * are the real code, on the same queues a real worker serves (the command queue, the host's queue
 * and its control queue). A command whose host dies gets a host queue of its own that nothing
 * polls, and plays on the command queue in its first attempt.
 */
import os from 'node:os';
import path from 'node:path';
import { Client, type DataConverter } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createChooseHost } from '../activities/choose-host.js';
import { createReleaseCommand } from '../activities/release-command.js';
import { createResolveCommand } from '../activities/resolve-command.js';
import { Approvals } from '../client/approvals.js';
import { createApprovalActivities } from '../client/approved-runs.js';
import { BashTasks } from '../client/bash-tasks.js';
import { AttachedTasks } from '../command-host/attached-tasks.js';
import {
  type CompiledExecutorOptions,
  compileExecutorOptions,
  type ExecutorOptions,
} from '../command-host/executor-config.js';
import type { ApprovalDecision } from '../shared/approval.js';
import type { BashTaskInput } from '../shared/task.js';
import { controlTaskQueue, DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { createToolCallActivities } from '../tools/tool-call-activities.js';
import { monitorSinkOf } from '../worker/monitor-sink.js';
import { ourWorkflows } from '../worker/workflow-bundle.js';
import type { CommandScript } from './command-script.js';
import type { AttemptOf } from './scripted-runs.js';
import { ScriptedRuns } from './scripted-runs.js';

export interface ScriptedHostOptions {
  /** The command queue, where `bashTask` runs: give the tools the same one. @default 'durable-bash' */
  taskQueue?: string;
  /**
   * Each command's script, by its exact command line, or a function of the command line. A command
   * with no script ends its task failed: `no script for the command "..."`.
   */
  scripts: Readonly<Record<string, CommandScript>> | ((command: string) => CommandScript | undefined);
  /**
   * The worker's executor options that still apply: timeouts (`defaultTimeoutMs`, `maxTimeoutMs`),
   * `lostAfterMs`, `outputLimitBytes`, `hostId`, `defaultWorkdir`.
   */
  executor?: ExecutorOptions;
  /** As the tools' client stores payloads (`encryptingDataConverter(keyring)`). @default Temporal's */
  dataConverter?: DataConverter;
}

/**
 * Starts a scripted host on a time-skipping test environment; `shutdown()` it when the test is done.
 * Time moves as the test server moves it: while the test awaits a workflow's result (a foreground
 * `bash`, a kill, an agent workflow's result), calls `env.sleep`, or runs a call in `skipTimeWhile`.
 */
export async function startScriptedHost(
  env: TestWorkflowEnvironment,
  options: ScriptedHostOptions,
): Promise<ScriptedHost> {
  const host = new ScriptedHost(env, options);
  await host.start();
  return host;
}

export class ScriptedHost {
  readonly taskQueue: string;
  readonly hostId: string;
  readonly hostQueue: string;
  private readonly runs: ScriptedRuns;
  private readonly client: Client;
  private readonly config: CompiledExecutorOptions;
  private queueWorker: Worker | undefined;
  /** The host's own workers: its queue and its control queue. */
  private hostWorkers: Worker[] = [];
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly env: TestWorkflowEnvironment,
    private readonly options: ScriptedHostOptions,
  ) {
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.config = compileExecutorOptions(
      {
        hostId: 'scripted',
        // Named in texts (a cut output's complete copy); nothing is written there.
        spillDir: path.join(os.tmpdir(), 'durable-bash-scripted'),
        ...options.executor,
      },
      this.taskQueue,
    );
    this.hostId = this.config.hostId;
    this.hostQueue = this.config.hostQueue;
    this.client = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    });
    const { scripts } = options;
    const sink = monitorSinkOf(this.client, this.taskQueue);
    this.runs = new ScriptedRuns({
      hostQueue: this.hostQueue,
      spillDir: this.config.spillDir,
      outputLimitBytes: this.config.outputLimitBytes,
      now: () => env.currentTimeMs(),
      sleep: (ms) => (ms > 0 ? env.sleep(ms) : Promise.resolve()),
      outlive: (attempt, landedAtMs, heartbeatTimeoutMs) =>
        this.outlive(attempt, landedAtMs, heartbeatTimeoutMs),
      heartbeatLanded: (attempt, sentAtMs) => this.heartbeatLanded(attempt, sentAtMs),
      sendMonitorBatch: (taskId, target, batch) => sink.send(taskId, target, batch),
      scriptFor: (command) =>
        typeof scripts === 'function'
          ? scripts(command)
          : Object.hasOwn(scripts, command)
            ? scripts[command]
            : undefined,
    });
  }

  /**
   * Plays a person's decision on an approval request (`waiting for approval: <id>`), `afterMs` of
   * test time from now (skipped, not waited), through the same `decide` update the CLI sends.
   * Answers `approved <id>` or `denied <id>`; a second decision is refused as the CLI's is.
   */
  async decide(
    approvalId: string,
    decision: ApprovalDecision,
    options: { afterMs?: number } = {},
  ): Promise<string> {
    if (options.afterMs !== undefined && options.afterMs > 0) await this.env.sleep(options.afterMs);
    const approvals = new Approvals({
      tasks: new BashTasks({ client: this.client, taskQueue: this.taskQueue }),
    });
    return approvals.decide(approvalId, decision);
  }

  /** What the command of `taskId` read from its stdin (`bash_input`), in order. */
  stdinOf(taskId: string): string | undefined {
    return this.runs.stdinOf(taskId);
  }

  /**
   * Runs `call` (a tool call, say) with the test server's clock free to move, as awaiting a
   * workflow's result frees it: a `bash_output` with `wait_ms` then waits in workflow time.
   */
  async skipTimeWhile<T>(call: () => Promise<T>): Promise<T> {
    const { testService } = this.env.connection;
    if (testService === undefined) throw new Error('skipTimeWhile needs a time-skipping test environment');
    await testService.unlockTimeSkipping({});
    try {
      return await call();
    } finally {
      await testService.lockTimeSkipping({});
    }
  }

  /**
   * Lets a running attempt of a command whose host died time out, and the host queue's attempt that
   * follows it wait out the lost window, as the server does for a real dead host.
   *
   * The test server holds its clock for every activity scheduled or running until it closes, so
   * neither timeout comes by itself in test time. Each is covered by an `env.sleep` that ends, and
   * holds the clock again, just before it: the rest of the way (`TIMEOUT_APPROACH_MS`) passes in
   * wall time, and the timeout's own release then leaves the count where it was.
   */
  private async outlive(
    attempt: AttemptOf,
    heartbeatLandedAtMs: number,
    heartbeatTimeoutMs: number,
  ): Promise<void> {
    await this.sleepUntil(heartbeatLandedAtMs + heartbeatTimeoutMs - TIMEOUT_APPROACH_MS);
    const handle = this.client.workflow.getHandle(attempt.workflowId);
    // The host queue's attempt, scheduled once the workflow has heard of the timeout.
    for (;;) {
      const { events } = await handle.fetchHistory();
      const scheduled = events?.find(
        (event) =>
          event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
          event.activityTaskScheduledEventAttributes?.taskQueue?.name === attempt.hostQueue,
      );
      const closed = events?.some((event) => CLOSED_EVENTS.has(event.eventType ?? 0));
      if (closed) return;
      if (scheduled !== undefined) {
        const startBy =
          tsToMs(scheduled.eventTime) +
          tsToMs(scheduled.activityTaskScheduledEventAttributes?.scheduleToStartTimeout);
        await this.sleepUntil(startBy - TIMEOUT_APPROACH_MS);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Lets the server's clock run to `atMs` (its time), and holds it again there. */
  private async sleepUntil(atMs: number): Promise<void> {
    const ms = atMs - (await this.env.currentTimeMs());
    if (ms > 0) await this.env.sleep(ms);
  }

  /** Resolves once the server shows the attempt's heartbeat sent at `sentAtMs` (its clock) or later. */
  private async heartbeatLanded(attempt: AttemptOf, sentAtMs: number): Promise<number> {
    const handle = this.client.workflow.getHandle(attempt.workflowId);
    for (;;) {
      const { raw } = await handle.describe();
      const pending = raw.pendingActivities?.find((activity) => activity.activityId === attempt.activityId);
      // Gone (timed out, cancelled): nothing more lands.
      if (pending === undefined) return sentAtMs;
      const landedAtMs = pending.lastHeartbeatTime ? tsToMs(pending.lastHeartbeatTime) : 0;
      if (landedAtMs >= sentAtMs) return landedAtMs;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /** @internal Creates and runs the workers; `startScriptedHost` calls it. */
  async start(): Promise<void> {
    const { nativeConnection: connection } = this.env;
    const namespace = this.env.namespace ?? 'default';
    const common = {
      connection,
      namespace,
      ...(this.options.dataConverter ? { dataConverter: this.options.dataConverter } : {}),
    };
    const scripted = this.runs.activities();
    const attached = new AttachedTasks();
    const resolveCommand = createResolveCommand(this.config);
    const real = {
      // A command whose host dies gets a host queue of its own, which no worker ever polls.
      resolveCommand: async (input: BashTaskInput) => {
        const spec = await resolveCommand(input);
        const dies = this.runs.scriptFor(input.command)?.plan.hostDiesAtMs !== undefined;
        if (!dies || spec.hostQueue === undefined) return spec;
        return { ...spec, hostQueue: `${spec.hostQueue}-dies-${spec.taskId}` };
      },
      chooseHost: createChooseHost(this.config),
      releaseCommand: createReleaseCommand(attached),
    };
    const commandActivities = { ...real, ...scripted };
    this.queueWorker = await Worker.create({
      ...common,
      taskQueue: this.taskQueue,
      ...ourWorkflows(),
      // A command whose host dies plays in one attempt here, heartbeating at each event: each
      // heartbeat must reach the server at once, however little wall time passed since the last.
      maxHeartbeatThrottleInterval: 1,
      activities: {
        ...commandActivities,
        ...createToolCallActivities(this.client, this.taskQueue),
        ...createApprovalActivities(this.client, this.taskQueue),
      },
    });
    this.hostWorkers = [
      await Worker.create({ ...common, taskQueue: this.hostQueue, activities: commandActivities }),
      await Worker.create({
        ...common,
        taskQueue: controlTaskQueue(this.hostQueue),
        activities: {
          readOutput: scripted.readOutput,
          stopCommand: scripted.stopCommand,
          writeStdin: scripted.writeStdin,
          releaseCommand: real.releaseCommand,
          setMonitor: scripted.setMonitor,
        },
      }),
    ];
    this.running = Promise.all([this.queueWorker, ...this.hostWorkers].map((worker) => worker.run()));
  }

  /** Stops the host's workers (the tasks' workflows stay where they are on the server). */
  async shutdown(): Promise<void> {
    for (const worker of [this.queueWorker, ...this.hostWorkers])
      if (worker?.getState() === 'RUNNING') worker.shutdown();
    await this.running;
  }
}

/** Events that close a workflow: a dead host's task that was closed otherwise (killed, say) has no lost window. */
const { EventType } = proto.temporal.api.enums.v1;
const CLOSED_EVENTS = new Set<number>([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
]);

/** How far short of a dead host's timeouts the test server's clock is held again: this passes in wall time. */
const TIMEOUT_APPROACH_MS = 50;
