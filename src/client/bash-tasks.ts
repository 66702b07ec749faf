import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  type InternalConnectionLike,
  InternalConnectionLikeSymbol,
  isGrpcDeadlineError,
  ServiceError,
  type WorkflowExecutionDescription,
  WorkflowFailedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { ActivityName } from '../activities/activity-names.js';
import { type OwnerHasher, ownerHasherOf } from '../codec/owner-hash.js';
import {
  ForeignTaskError,
  ReadAbortedError,
  RunAbortedError,
  TemporalUnreachableError,
  UnknownTaskError,
} from '../errors.js';
import { DEFAULT_NOTICE_WINDOW_MS, KILL_GRACE_MS } from '../shared/limits.js';
import type { HostRead, ReadPosition, StreamRead } from '../shared/read-position.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../shared/search-attributes.js';
import type { StdinWrite, StdinWriteResult } from '../shared/stdin.js';
import type { BashTaskInput, BashTaskResult, NoticeTarget, TaskId } from '../shared/task.js';
import { TaskStatus } from '../shared/task.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { bashTask, moveToBackgroundUpdate } from '../workflows/bash-task.js';
import { CONNECT_TIMEOUT_MS, clientAddress, firstLine } from './connect.js';
import {
  HostReadAborted,
  type OutputRead,
  type ReaderOptions,
  readNewOutput,
  readOnHost,
  readPosition,
  unclaimedRead,
} from './output-reads.js';
import { type WaitOptions, waitForNewOutput } from './output-wait.js';
import { mayAccess, ownerToken } from './ownership.js';
import { runFailure } from './run-failure.js';
import { serverNow } from './server-clock.js';
import { writeTaskStdin } from './stdin-write.js';
import { newTaskId } from './task-id.js';
import { type TaskFilter, type TaskSummary, taskListQuery, toTaskSummary } from './task-list.js';
import {
  commandHostQueue,
  isTaskWorkflow,
  snapshotFromDescription,
  type TaskSnapshot,
} from './task-snapshot.js';

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
  /**
   * Eager workflow start: the server hands each new run's first workflow task straight back to a
   * command worker in this process, a matching round trip less per run. Needs `client` on that
   * worker's own `NativeConnection` (`new Client({ connection: nativeConnection })`); the SDK refuses
   * it on any other connection. @default false
   */
  eagerStart?: boolean;
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
  /** A background run whose stdin stays open for `writeStdin`. */
  keepStdinOpen?: boolean;
}

/** What a foreground call gets: the run's result, or the output so far of a run that moved to the background. */
export type ForegroundOutcome =
  | { kind: 'ended'; result: BashTaskResult }
  | { kind: 'moved'; read: OutputRead; afterMs: number };

/** How long a foreground call waits for the workflow to take (or refuse) its move to the background. */
const MOVE_TIMEOUT_MS = CONNECT_TIMEOUT_MS;

/** Time between a move's expiry and the end of the caller's wait, for the answer to come back. */
const MOVE_ANSWER_MARGIN_MS = 2_000;

/** How long `kill` waits for the killed run to report its end. */
const KILL_CONFIRM_MS = KILL_GRACE_MS + 10_000;

/**
 * A command or stop activity no worker has taken for this long has no worker on its host answering:
 * a live worker takes one within milliseconds. (Heartbeats, a minute apart, say nothing this soon.)
 */
const SILENT_WORKER_MS = 2_000;

/** How long a read whose command just ended waits for the task to close, to answer with its final status. */
const CLOSING_READ_WAIT_MS = 2_000;

/** How often that read looks. */
const CLOSING_READ_INTERVAL_MS = 25;

/** How often a waiting read looks whether its task has reached a host yet. */
const WAIT_FOR_HOST_INTERVAL_MS = 50;

/** How a `bash_output` read is made. */
export interface ReadOptions {
  /** A running task's unfinished last line stays for a later read (a filtered read). */
  wholeLines?: boolean;
  /** With nothing new, wait this long for new output (or the task's end). */
  waitMs?: number;
  /** Aborts a waiting read (`ReadAbortedError`); a read the host had not answered moves nothing. */
  signal?: AbortSignal;
  /** Only new text this says yes to ends the wait (a filtered read: a line that matches). */
  wanted?: (text: string) => boolean;
}

/** How often `kill` checks whether its kill waits for the task's host to come back. */
const KILL_CHECK_INTERVAL_MS = 500;

/** The client side of durable-bash tasks: each run is one `bashTask` workflow whose id is the task id. */
export class BashTasks {
  readonly client: Client;
  readonly taskQueue: string;
  readonly agentTaskQueue: string | undefined;
  readonly noticeWindowMs: number;
  private readonly eagerStart: boolean;
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
    this.eagerStart = options.eagerStart === true;
    if (this.eagerStart && !supportsEagerStart(this.client))
      throw new RangeError(
        "eagerStart needs a client on the command worker's NativeConnection (new Client({ connection: nativeConnection }))",
      );
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
      ...(request.background ? this.noticeFor(request.owner) : {}),
      ...(request.background && request.keepStdinOpen ? { keepStdinOpen: true } : {}),
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
            // bash_list shows background tasks only; a run moved there says so again.
            background: request.background,
            // The search attribute holds only a hash then: listings show the owner from here.
            ...(this.ownerHasher !== undefined && request.owner !== undefined
              ? { owner: request.owner }
              : {}),
          },
          staticSummary: request.description,
          staticDetails: `\`\`\`bash\n${request.command}\n\`\`\``,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          ...(this.eagerStart ? { requestEagerStart: true } : {}),
        }),
      );
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
    return taskId;
  }

  /** Where a background task of `owner` sends its completion notice: nowhere without an owner or agent worker. */
  private noticeFor(owner: string | undefined): { notice?: NoticeTarget } {
    if (owner === undefined || this.agentTaskQueue === undefined) return {};
    return { notice: { sessionId: owner, taskQueue: this.agentTaskQueue, windowMs: this.noticeWindowMs } };
  }

  /**
   * Waits for a run's result. Aborting `signal` stops the run (its process group is killed);
   * aborting `stopWaiting` only stops this wait (it then rejects with the abort's reason).
   */
  async result(taskId: TaskId, signal?: AbortSignal, stopWaiting?: AbortSignal): Promise<BashTaskResult> {
    const handle = this.client.workflow.getHandle<typeof bashTask>(taskId);
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    stopWaiting?.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal?.aborted || stopWaiting?.aborted) abort.abort();
      return await this.client.withAbortSignal(abort.signal, () => handle.result());
    } catch (err) {
      if (abort.signal.aborted) {
        if (stopWaiting?.aborted && !signal?.aborted) throw stopWaiting.reason;
        await handle.cancel();
        throw new RunAbortedError(taskId);
      }
      if (err instanceof WorkflowFailedError) throw runFailure(taskId, err);
      throw this.unreachable(err) ?? err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stopWaiting?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Waits for a foreground run's result; with `autoBackgroundAfterMs`, a run still going after that
   * long moves to the background (owned by `owner`, with its completion notice) and answers with the
   * output so far, claimed as a `bash_output` read would, so the next read goes on after it. A run
   * that ends as it is moved answers with its result.
   */
  async foregroundResult(
    taskId: TaskId,
    options: {
      signal?: AbortSignal;
      autoBackgroundAfterMs?: number;
      owner?: string;
      /** Makes the move, or not (false): the owner's background quota. */
      admitMove?: (move: () => Promise<boolean>) => Promise<boolean>;
    } = {},
  ): Promise<ForegroundOutcome> {
    const { signal, autoBackgroundAfterMs, owner, admitMove = (move) => move() } = options;
    if (autoBackgroundAfterMs === undefined)
      return { kind: 'ended', result: await this.result(taskId, signal) };
    const stopWaiting = new AbortController();
    const ended = this.result(taskId, signal, stopWaiting.signal).then((result) => ({
      kind: 'ended' as const,
      result,
    }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const due = new Promise<'due'>((resolve) => {
      timer = setTimeout(() => resolve('due'), autoBackgroundAfterMs);
    });
    try {
      const first = await Promise.race([ended, due]);
      if (first !== 'due') return first;
    } finally {
      clearTimeout(timer);
    }
    const before = await this.describeOwned(taskId, owner);
    if (!(await admitMove(() => this.moveToBackground(taskId, owner)))) return ended;
    stopWaiting.abort(new Error('moved to the background'));
    // Settled before the read: it can no longer cancel the run, which is not this call's any more.
    await ended.catch(() => undefined);
    // The output so far, read on the command's host (the attempt that re-attaches needs no heartbeat for it).
    const read = await this.readDescribed(before, {});
    return { kind: 'moved', read, afterMs: autoBackgroundAfterMs };
  }

  /**
   * Moves a foreground run to the background: no timeout any more, and a completion notice in the
   * owner's session. False when the run refused (it had ended, or its timeout had fired) or did not
   * answer in time; the caller then waits for its result as before.
   */
  async moveToBackground(taskId: TaskId, owner: string | undefined): Promise<boolean> {
    const handle = this.client.workflow.getHandle<typeof bashTask>(taskId);
    // The workflow refuses a move it takes after this, well before this call stops waiting; a
    // workflow task that took it in time but answered late is found in the memo the move writes.
    const expiresAtMs = serverNow(this.client) + MOVE_TIMEOUT_MS - MOVE_ANSWER_MARGIN_MS;
    const gaveUp = AbortSignal.timeout(MOVE_TIMEOUT_MS);
    try {
      await this.client.withAbortSignal(gaveUp, () =>
        handle.executeUpdate(moveToBackgroundUpdate, { args: [{ ...this.noticeFor(owner), expiresAtMs }] }),
      );
      return true;
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) return false;
      if (gaveUp.aborted) {
        const description = await this.client
          .withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () => handle.describe())
          .catch(() => undefined);
        return description?.memo?.background === true;
      }
      throw this.unreachable(err) ?? err;
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
   * The kill waits for a worker to come back: the stop activity the kill sends (or the command's
   * next attempt) has waited for a worker on the host longer than a live one takes, or the workflow
   * task that carries the kill has waited for any worker of the queue. These are the probes: a
   * worker that is there takes them at once, however long ago the command heartbeated.
   */
  private async killWaitsForHost(taskId: string): Promise<boolean> {
    const description = await this.client.workflow
      .getHandle(taskId)
      .describe()
      .catch(() => undefined);
    const { PendingActivityState, PendingWorkflowTaskState } = proto.temporal.api.enums.v1;
    const silentSince = (time: { seconds?: { toString(): string } | null } | null | undefined) =>
      Date.now() - Number(time?.seconds?.toString() ?? Date.now() / 1000) * 1000 > SILENT_WORKER_MS;
    // No worker takes the workflow task that carries the kill (every worker of the queue is down).
    const workflowTask = description?.raw.pendingWorkflowTask;
    if (
      workflowTask?.state === PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED &&
      silentSince(workflowTask.scheduledTime)
    ) {
      return true;
    }
    return (
      description?.raw.pendingActivities?.some((activity) => {
        const name = activity.activityType?.name;
        if (name !== ActivityName.runCommand && name !== ActivityName.stopCommand) return false;
        // Due this long ago and no worker has taken it (a retry's backoff is not yet due).
        return (
          activity.state === PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED &&
          silentSince(activity.scheduledTime)
        );
      }) ?? false
    );
  }

  /**
   * The output since the previous read of this task, by any process (`bash_output`), and where the
   * task stands. A running task's output is read on its host, fresh; with `waitMs`, the host waits
   * there for new output (for a line `wanted` wants) or the command's end. Never waits on a worker for
   * more than a few seconds past that: without one on the host, it answers with what the server holds
   * (the last heartbeat) and leaves the read position where it was. With `wholeLines`, a running
   * task's unfinished last line stays for a later read.
   */
  async read(
    taskId: string,
    callerSessionId: string | undefined,
    options: ReadOptions = {},
  ): Promise<OutputRead> {
    return this.readDescribed(await this.describeOwned(taskId, callerSessionId), options);
  }

  private async readDescribed(
    description: WorkflowExecutionDescription,
    options: ReadOptions,
  ): Promise<OutputRead> {
    const taskId = description.workflowId;
    const deadline = Date.now() + Math.max(0, options.waitMs ?? 0);
    try {
      // A task that has not reached a host yet gets there within moments (a worker picks it up).
      const { current, hostQueue } = await this.onHost(description, deadline, options.signal);
      if (hostQueue !== undefined) {
        const waitMs = Math.max(0, deadline - Date.now());
        const rest = options.waitMs === undefined ? { ...options } : { ...options, waitMs };
        return await this.readFromHost(current, hostQueue, rest);
      }
      // A task not on a host yet (or recorded before reads went there), or one that has closed:
      // the server holds all there is.
      const left = deadline - Date.now();
      if (current.status.name === 'RUNNING' && left > 0) {
        await this.waitForOutput(taskId, undefined, left, options.signal, options, current);
      }
      const snapshot = await this.snapshotOf(await this.describeAgain(current));
      return await readNewOutput(this.client, snapshot, this.reader, options.wholeLines === true);
    } catch (err) {
      if (err instanceof HostReadAborted) throw new ReadAbortedError(taskId);
      if (err instanceof ReadAbortedError) throw err;
      throw this.unreachable(err) ?? err;
    }
  }

  /**
   * Reads on the task's host until there is something to show (for a filtered wait, a wanted line),
   * the command ended, or the wait is over. Bytes a round read but did not want are shown with the
   * rest (a filter counts them as left out).
   */
  private async readFromHost(
    description: WorkflowExecutionDescription,
    hostQueue: string,
    options: ReadOptions,
  ): Promise<OutputRead> {
    const taskId = description.workflowId;
    const readerOptions = this.reader;
    const deadline = Date.now() + Math.max(0, options.waitMs ?? 0);
    let shown: HostRead | undefined;
    for (;;) {
      const result = await readOnHost(
        this.client,
        taskId,
        hostQueue,
        {
          waitMs: Math.max(0, deadline - Date.now()),
          wholeLines: options.wholeLines === true,
          ...(options.signal ? { signal: options.signal } : {}),
        },
        readerOptions,
      );
      if (result === undefined || result.kind === 'host-unavailable') {
        if (shown !== undefined) return runningRead(shown);
        // No worker on the host answered: what the server last knew, the position unmoved.
        const position = result?.position ?? (await readPosition(this.client, taskId));
        const snapshot = await this.snapshotOf(await this.describeAgain(description));
        return unclaimedRead(snapshot, position, options.wholeLines === true);
      }
      if (result.kind === 'late') return runningRead(shown ?? emptyRead(result.position));
      const { read } = result;
      const grew = read.upTo.stdout > result.before.stdout || read.upTo.stderr > result.before.stderr;
      shown = shown === undefined ? read : joinReads(shown, read);
      if (read.ended) return this.closingRead(description, shown);
      const wantedNow =
        grew &&
        (options.wanted === undefined ||
          read.stdout.droppedBytes + read.stderr.droppedBytes > 0 ||
          options.wanted(read.stdout.text) ||
          options.wanted(read.stderr.text));
      if (wantedNow || Date.now() >= deadline || options.waitMs === undefined) return runningRead(shown);
    }
  }

  /**
   * A running task's output from `from` on, read on its host (waiting there up to `waitMs` for more),
   * without moving `bash_output`'s read position: an operator's view (`durable-bash logs --follow`).
   * Undefined when the task is not running on a host, or no worker there answered in time: the
   * server's snapshot is then all there is.
   */
  async peek(
    taskId: string,
    callerSessionId: string | undefined,
    from: ReadPosition,
    waitMs: number,
  ): Promise<HostRead | undefined> {
    const description = await this.describeOwned(taskId, callerSessionId);
    const hostQueue = await commandHostQueue(this.client, description);
    if (hostQueue === undefined) return undefined;
    try {
      const result = await readOnHost(
        this.client,
        taskId,
        hostQueue,
        { waitMs, wholeLines: false, peekFrom: from },
        this.reader,
      );
      return result?.kind === 'read' ? result.read : undefined;
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
  }

  /**
   * A read whose command ended on the host: its output is whole, and the task closes within moments.
   * Answers with the final status once it has (reading what the result holds past the position, which
   * is nothing more), else with the output and the running status.
   */
  private async closingRead(description: WorkflowExecutionDescription, shown: HostRead): Promise<OutputRead> {
    const until = Date.now() + CLOSING_READ_WAIT_MS;
    for (;;) {
      const now = await this.describeAgain(description);
      if (now.status.name !== 'RUNNING') {
        const snapshot = await this.snapshotOf(now);
        const rest = await readNewOutput(this.client, snapshot, this.reader);
        return {
          ...rest,
          stdout: joinStreams(shown.stdout, rest.stdout),
          stderr: joinStreams(shown.stderr, rest.stderr),
          host: rest.host ?? shown.host,
        };
      }
      if (Date.now() >= until) return runningRead(shown);
      await sleep(CLOSING_READ_INTERVAL_MS);
    }
  }

  /**
   * The task once its run names its host, it closed, or `deadline` passed (then as it stands): a
   * waiting read of a task still on its way to a host reads there as soon as it is on one.
   */
  private async onHost(
    description: WorkflowExecutionDescription,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<{ current: WorkflowExecutionDescription; hostQueue: string | undefined }> {
    let current = description;
    for (;;) {
      const hostQueue = await commandHostQueue(this.client, current);
      if (hostQueue !== undefined || current.status.name !== 'RUNNING' || Date.now() >= deadline)
        return { current, hostQueue };
      if (signal?.aborted) throw new ReadAbortedError(description.workflowId);
      await sleep(Math.min(WAIT_FOR_HOST_INTERVAL_MS, deadline - Date.now()));
      current = await this.describeAgain(current);
    }
  }

  /** How this client's reads run the task's reader workflow. */
  private get reader(): ReaderOptions {
    return { taskQueue: this.taskQueue, ...this.readerOptions };
  }

  private describeAgain(description: WorkflowExecutionDescription): Promise<WorkflowExecutionDescription> {
    return this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      this.client.workflow.getHandle(description.workflowId).describe(),
    );
  }

  private snapshotOf(description: WorkflowExecutionDescription): Promise<TaskSnapshot> {
    return this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      snapshotFromDescription(this.client, description),
    );
  }

  /**
   * Waits up to `timeoutMs` while the task runs with nothing new to read (see `waitForNewOutput`);
   * resolves when there is output to read, the task ended, or the time is up. Throws
   * `ReadAbortedError` when `signal` aborts the wait. Works with no worker alive.
   */
  async waitForOutput(
    taskId: string,
    callerSessionId: string | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
    options: Pick<WaitOptions, 'wholeLines' | 'wanted'> = {},
    /** The task as already described behind the fence (then `callerSessionId` is not asked again). */
    described?: WorkflowExecutionDescription,
  ): Promise<void> {
    const outcome = await waitForNewOutput(
      () =>
        described
          ? this.describeAgain(described).then((description) => this.snapshotOf(description))
          : this.snapshot(taskId, callerSessionId),
      () =>
        readPosition(this.client, taskId).catch((err: unknown) =>
          Promise.reject(this.unreachable(err) ?? err),
        ),
      { ...options, timeoutMs, ...(signal !== undefined ? { signal } : {}) },
    );
    if (outcome === 'aborted') throw new ReadAbortedError(taskId);
  }

  /**
   * Writes to the stdin of a task started with `keepStdinOpen`, through its supervisor on its host,
   * and answers what went in. Throws `StdinWriteError` (one line) when nothing could be written.
   */
  async writeStdin(
    taskId: string,
    callerSessionId: string | undefined,
    write: StdinWrite,
  ): Promise<StdinWriteResult> {
    await this.describeOwned(taskId, callerSessionId);
    try {
      return await writeTaskStdin(this.client, taskId, write);
    } catch (err) {
      throw this.unreachable(err) ?? err;
    }
  }

  /** What the server holds of a task now (its status, the tails of its output); moves no read position. */
  async snapshot(taskId: string, callerSessionId: string | undefined): Promise<TaskSnapshot> {
    const description = await this.describeOwned(taskId, callerSessionId);
    try {
      return await this.snapshotOf(description);
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

/** Whether the client's connection can start workflows eagerly (it is a worker's `NativeConnection`). */
function supportsEagerStart(client: Client): boolean {
  const connection = client.connection as InternalConnectionLike;
  return connection[InternalConnectionLikeSymbol]?.supportsEagerStart === true;
}

/** A host read as a `bash_output` answer while the task runs. */
function runningRead(read: HostRead): OutputRead {
  return {
    state: { status: 'running' },
    stdout: read.stdout,
    stderr: read.stderr,
    host: read.host,
    unclaimed: false,
  };
}

/** A read that got nothing. */
function emptyRead(position: ReadPosition): HostRead {
  const nothing: StreamRead = { text: '', droppedBytes: 0 };
  return { upTo: position, stdout: nothing, stderr: nothing, host: '', ended: false };
}

/** Two reads of one call, one after the other, as one. */
function joinReads(first: HostRead, second: HostRead): HostRead {
  return {
    ...second,
    stdout: joinStreams(first.stdout, second.stdout),
    stderr: joinStreams(first.stderr, second.stderr),
  };
}

function joinStreams(first: StreamRead, second: StreamRead): StreamRead {
  const spillPath = second.spillPath ?? first.spillPath;
  return {
    text: first.text + second.text,
    droppedBytes: first.droppedBytes + second.droppedBytes,
    ...(spillPath !== undefined ? { spillPath } : {}),
  };
}

function assertPositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, got ${value}`);
}
