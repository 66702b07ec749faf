import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  isGrpcDeadlineError,
  ServiceError,
  type WorkflowExecutionDescription,
  WorkflowFailedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { type OwnerHasher, ownerHasherOf } from '../codec/owner-hash.js';
import { ForeignTaskError, RunAbortedError, TemporalUnreachableError, UnknownTaskError } from '../errors.js';
import { DEFAULT_NOTICE_WINDOW_MS, IDLE_HEARTBEAT_INTERVAL_MS, KILL_GRACE_MS } from '../shared/limits.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../shared/search-attributes.js';
import type { BashTaskInput, BashTaskResult, TaskId } from '../shared/task.js';
import { TaskStatus } from '../shared/task.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { bashTask } from '../workflows/bash-task.js';
import { CONNECT_TIMEOUT_MS, clientAddress, firstLine } from './connect.js';
import { type OutputRead, type ReaderOptions, readNewOutput } from './output-reads.js';
import { mayAccess, ownerToken } from './ownership.js';
import { runFailure } from './run-failure.js';
import { newTaskId } from './task-id.js';
import { type TaskFilter, type TaskSummary, taskListQuery, toTaskSummary } from './task-list.js';
import { isTaskWorkflow, snapshotFromDescription, type TaskSnapshot } from './task-snapshot.js';

export interface BashTasksOptions {
  client: Client;
  /** The task queue the command workers serve. @default DEFAULT_TASK_QUEUE */
  taskQueue?: string;
  /**
   * The task queue this agent host's worker (`createAgentWorker`) serves. When set, a background
   * task with an owner gets a completion notice in that session. @default no notices
   */
  agentTaskQueue?: string;
  /** How long a completion notice waits for an agent worker before it is dropped. @default DEFAULT_NOTICE_WINDOW_MS */
  noticeWindowMs?: number;
  /** How a task's output reader workflow runs; tests shorten these. @default READER_CLAIMS_PER_RUN, READER_IDLE_MS */
  reader?: Omit<ReaderOptions, 'taskQueue'>;
}

export interface StartRequest {
  command: string;
  description: string;
  /** Absolute, or relative to the worker's default workdir; absent for the worker's default. */
  workdir?: string;
  timeoutMs?: number;
  background: boolean;
  /** The agent session that owns the task; undefined for a task with no owner. */
  owner?: string;
}

/** How long `kill` waits for the killed run to report its end. */
const KILL_CONFIRM_MS = KILL_GRACE_MS + 10_000;

/** A command attempt without a heartbeat for this long has no worker answering (they come every 500 ms). */
const SILENT_WORKER_MS = 4 * IDLE_HEARTBEAT_INTERVAL_MS;

/** How often `kill` checks whether its kill waits for the task's host to come back. */
const KILL_CHECK_INTERVAL_MS = 500;

/** The client side of durable-bash tasks: each run is one `bashTask` workflow whose id is the task id. */
export class BashTasks {
  readonly client: Client;
  readonly taskQueue: string;
  readonly agentTaskQueue: string | undefined;
  readonly noticeWindowMs: number;
  private readonly readerOptions: Omit<ReaderOptions, 'taskQueue'>;
  /** Set when the client encrypts with durable-bash's codec: owners are then stored hashed. */
  private readonly ownerHasher: OwnerHasher | undefined;

  constructor(options: BashTasksOptions) {
    this.client = options.client;
    this.ownerHasher = ownerHasherOf(this.client);
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.agentTaskQueue = options.agentTaskQueue;
    this.noticeWindowMs = options.noticeWindowMs ?? DEFAULT_NOTICE_WINDOW_MS;
    this.readerOptions = options.reader ?? {};
    // Zero means "no limit" to Temporal's timeouts and "every activation" to the reader: refuse both.
    assertPositive('noticeWindowMs', this.noticeWindowMs);
    if (this.readerOptions.idleMs !== undefined) assertPositive('reader.idleMs', this.readerOptions.idleMs);
    if (this.readerOptions.probeIntervalMs !== undefined) {
      assertPositive('reader.probeIntervalMs', this.readerOptions.probeIntervalMs);
    }
    const { claimsPerRun } = this.readerOptions;
    if (claimsPerRun !== undefined && (!Number.isSafeInteger(claimsPerRun) || claimsPerRun < 1)) {
      throw new RangeError(`reader.claimsPerRun must be a positive integer, got ${claimsPerRun}`);
    }
  }

  /** Starts a run; resolves once the server has accepted it. */
  async start(request: StartRequest): Promise<TaskId> {
    const taskId = newTaskId();
    const input: BashTaskInput = {
      taskId,
      command: request.command,
      description: request.description,
      background: request.background,
      ...(request.workdir !== undefined ? { workdir: request.workdir } : {}),
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      ...(request.background && request.owner !== undefined && this.agentTaskQueue !== undefined
        ? {
            notice: {
              sessionId: request.owner,
              taskQueue: this.agentTaskQueue,
              windowMs: this.noticeWindowMs,
            },
          }
        : {}),
    };
    const owner = request.owner === undefined ? undefined : ownerToken(request.owner);
    const typedSearchAttributes = [
      { key: statusSearchAttribute, value: TaskStatus.running },
      ...(owner !== undefined
        ? [{ key: ownerSearchAttribute, value: this.ownerHasher?.hash(owner) ?? owner }]
        : []),
    ];
    try {
      await this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        this.client.workflow.start(bashTask, {
          workflowId: taskId,
          taskQueue: this.taskQueue,
          args: [input],
          typedSearchAttributes,
          memo: {
            command: request.command,
            description: request.description,
            workdir: request.workdir ?? null,
            // The search attribute holds only a hash then: listings show the owner from here.
            ...(this.ownerHasher !== undefined && request.owner !== undefined
              ? { owner: request.owner }
              : {}),
          },
          staticSummary: request.description,
          staticDetails: `\`\`\`bash\n${request.command}\n\`\`\``,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        }),
      );
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
    return taskId;
  }

  /** Waits for a run's result. Aborting `signal` stops the run (its process group is killed). */
  async result(taskId: TaskId, signal?: AbortSignal): Promise<BashTaskResult> {
    const handle = this.client.workflow.getHandle<typeof bashTask>(taskId);
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal?.aborted) abort.abort();
      return await this.client.withAbortSignal(abort.signal, () => handle.result());
    } catch (err) {
      if (abort.signal.aborted) {
        await handle.cancel();
        throw new RunAbortedError(taskId);
      }
      if (err instanceof WorkflowFailedError) throw runFailure(taskId, err);
      throw this.unreachable(err) ?? err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Kills a running task's whole process group and waits for its end; a finished task is left as
   * it is. While no worker on the task's host answers, the kill is recorded and takes effect once
   * one is back: that answers `pending` at once. Only the owning session (or anyone, for an unowned
   * task) may kill.
   */
  async kill(
    taskId: string,
    callerSessionId: string | undefined,
  ): Promise<'killed' | 'already-finished' | 'pending'> {
    const description = await this.describeOwned(taskId, callerSessionId);
    if (description.status.name !== 'RUNNING') return 'already-finished';
    const handle = this.client.workflow.getHandle<typeof bashTask>(taskId);
    try {
      await handle.cancel();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'already-finished';
      throw err;
    }
    const deadline = Date.now() + KILL_CONFIRM_MS;
    const stopWaiting = new AbortController();
    const ended = this.client
      .withAbortSignal(stopWaiting.signal, () => handle.result())
      .then(
        () => true,
        (err: unknown) => {
          // The kill is requested either way; a run that ends without an outcome is still ended.
          if (err instanceof WorkflowFailedError || stopWaiting.signal.aborted) return true;
          throw err;
        },
      );
    try {
      while (Date.now() < deadline) {
        const done = await Promise.race([ended, sleep(KILL_CHECK_INTERVAL_MS).then(() => false)]);
        if (done) return 'killed';
        if (await this.killWaitsForHost(taskId)) return 'pending';
      }
      return 'killed';
    } finally {
      stopWaiting.abort();
    }
  }

  /**
   * The kill waits for the task's host to come back: the command's activity (or the stop activity
   * a kill sends) waits for a worker to take it, or its worker has stopped heartbeating.
   */
  private async killWaitsForHost(taskId: string): Promise<boolean> {
    const description = await this.client.workflow
      .getHandle(taskId)
      .describe()
      .catch(() => undefined);
    const { PendingActivityState } = proto.temporal.api.enums.v1;
    return (
      description?.raw.pendingActivities?.some((activity) => {
        const name = activity.activityType?.name;
        if (name !== 'runCommand' && name !== 'stopCommand') return false;
        const silentSince = (time: typeof activity.scheduledTime) =>
          Date.now() - Number(time?.seconds?.toString() ?? Date.now() / 1000) * 1000 > SILENT_WORKER_MS;
        // Due this long ago and no worker has taken it (a retry's backoff is not yet due).
        if (activity.state === PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED)
          return silentSince(activity.scheduledTime);
        return name === 'runCommand' && silentSince(activity.lastHeartbeatTime);
      }) ?? false
    );
  }

  /**
   * The output since the previous read of this task, by any process (`bash_output`), and where the
   * task stands. Never waits on a worker for more than a few seconds: without one, it answers with
   * what the server holds and leaves the read position where it was.
   */
  async read(taskId: string, callerSessionId: string | undefined): Promise<OutputRead> {
    const snapshot = await this.snapshot(taskId, callerSessionId);
    try {
      return await readNewOutput(this.client, snapshot, { taskQueue: this.taskQueue, ...this.readerOptions });
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
  }

  /** What the server holds of a task now (its status, the tails of its output); moves no read position. */
  async snapshot(taskId: string, callerSessionId: string | undefined): Promise<TaskSnapshot> {
    const description = await this.describeOwned(taskId, callerSessionId);
    try {
      return await this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        snapshotFromDescription(this.client, description),
      );
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
  }

  /**
   * Up to `limit` tasks matching `filter` in the server's visibility order (running ones first,
   * then the latest to end); the store may lag a moment behind a start or an end.
   */
  async list(filter: TaskFilter, limit = 100): Promise<TaskSummary[]> {
    const tasks: TaskSummary[] = [];
    try {
      await this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, async () => {
        for await (const execution of this.client.workflow.list({
          query: taskListQuery(filter, this.ownerHasher),
          pageSize: limit,
        })) {
          tasks.push(toTaskSummary(execution));
          if (tasks.length >= limit) break;
        }
      });
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
    return tasks;
  }

  /** Describes a task's workflow behind the ownership fence. */
  private async describeOwned(
    taskId: string,
    callerSessionId: string | undefined,
  ): Promise<WorkflowExecutionDescription> {
    const description = await this.client
      .withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () => this.client.workflow.getHandle(taskId).describe())
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) throw new UnknownTaskError(taskId);
        throw this.unreachable(err) ?? err;
      });
    if (!isTaskWorkflow(description)) throw new UnknownTaskError(taskId);
    if (
      !mayAccess(
        description.typedSearchAttributes.get(ownerSearchAttribute),
        callerSessionId,
        this.ownerHasher,
      )
    ) {
      throw new ForeignTaskError(taskId);
    }
    return description;
  }

  private unreachable(err: unknown): TemporalUnreachableError | undefined {
    const cause = err instanceof ServiceError ? err.cause : err;
    const code = (cause as { code?: unknown } | undefined)?.code;
    // gRPC UNAVAILABLE (14) and DEADLINE_EXCEEDED (4): no server answered in time.
    if (code === 14 || code === 4 || isGrpcDeadlineError(cause)) {
      return new TemporalUnreachableError(clientAddress(this.client), firstLine(cause));
    }
    return undefined;
  }
}

function assertPositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, got ${value}`);
}
