/**
 * The client side of durable-bash tasks, what the tools and the CLI call: each run is one `bashTask`
 * workflow whose id is the task id. The operations live in their own files (task-start, foreground,
 * task-reads, task-kill, stdin-write, task-list); this class holds the client's settings and the
 * ownership fence every operation on an existing task goes through.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { type OwnerHasher, ownerHasherOf } from '../codec/owner-hash.js';
import { positiveIntegerOption, positiveOption } from '../shared/checks.js';
import { ForeignTaskError, UnknownTaskError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS, DEFAULT_NOTICE_WINDOW_MS } from '../shared/limits.js';
import type { HostRead, ReadPosition, TerminalReadMode } from '../shared/read-position.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import type { StdinWrite, StdinWriteResult } from '../shared/stdin.js';
import type { BashTaskResult, NoticeTarget, TaskId, TaskStart } from '../shared/task.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { type ForegroundOutcome, foregroundResult, moveToBackground, runResult } from './foreground.js';
import { newTaskId } from './new-task-id.js';
import { withNoticeMarks } from './notice-marks.js';
import type { OutputRead, ReaderOptions } from './output-reader-client.js';
import type { WaitOptions } from './output-wait.js';
import { mayAccess } from './ownership.js';
import { writeTaskStdin } from './stdin-write.js';
import { type KillOptions, killTask } from './task-kill.js';
import { listExecutions, type TaskFilter, type TaskSummary, taskListQuery } from './task-list.js';
import { type ReadOptions, TaskReads } from './task-reads.js';
import { isTaskWorkflow, type TaskSnapshot } from './task-snapshot.js';
import { type StartRequest, startTask, supportsEagerStart, taskStart } from './task-start.js';
import { asClientError } from './temporal-unreachable.js';
import { refuseUnencryptedMemo } from './unencrypted-payloads.js';
import { WorkspaceFiles } from './workspace-files.js';

export type { ForegroundOutcome } from './foreground.js';
export type { KillOptions } from './task-kill.js';
export type { ReadOptions } from './task-reads.js';
export type { StartRequest } from './task-start.js';

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
  private readonly reads: TaskReads;
  private files: WorkspaceFiles | undefined;

  constructor(options: BashTasksOptions) {
    this.client = options.client;
    this.ownerHasher = ownerHasherOf(this.client);
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.agentTaskQueue = options.agentTaskQueue;
    this.noticeWindowMs = options.noticeWindowMs ?? DEFAULT_NOTICE_WINDOW_MS;
    this.readerOptions = options.reader ?? {};
    this.eagerStart = options.eagerStart === true;
    this.reads = new TaskReads(this.client, { taskQueue: this.taskQueue, ...this.readerOptions });
    if (this.eagerStart && !supportsEagerStart(this.client))
      throw new RangeError(
        "eagerStart needs a client on the command worker's NativeConnection (new Client({ connection: nativeConnection }))",
      );
    // Zero means "no limit" to Temporal's timeouts and "every activation" to the reader: refuse both.
    positiveOption('noticeWindowMs', this.noticeWindowMs);
    if (this.readerOptions.idleMs !== undefined) positiveOption('reader.idleMs', this.readerOptions.idleMs);
    if (this.readerOptions.probeIntervalMs !== undefined) {
      positiveOption('reader.probeIntervalMs', this.readerOptions.probeIntervalMs);
    }
    const { claimsPerRun } = this.readerOptions;
    if (claimsPerRun !== undefined) positiveIntegerOption('reader.claimsPerRun', claimsPerRun);
  }

  /** Starts a run; resolves once the server has accepted it. */
  start(request: StartRequest): Promise<TaskId> {
    return startTask(
      {
        client: this.client,
        taskQueue: this.taskQueue,
        eagerStart: this.eagerStart,
        ownerHasher: this.ownerHasher,
        noticeFor: (owner) => this.noticeFor(owner),
      },
      request,
    );
  }

  /**
   * The workflow start of a run, with a new task id, to be started later by someone else (an
   * approval's workflow, once approved).
   */
  prepareStart(request: StartRequest): TaskStart {
    return taskStart({ ownerHasher: this.ownerHasher }, request, newTaskId(), this.noticeFor(request.owner));
  }

  /** Where a background task of `owner` sends its completion notice: nowhere without an owner or agent worker. */
  noticeFor(owner: string | undefined): { notice?: NoticeTarget } {
    if (owner === undefined || this.agentTaskQueue === undefined) return {};
    return { notice: { sessionId: owner, taskQueue: this.agentTaskQueue, windowMs: this.noticeWindowMs } };
  }

  /**
   * Waits for a run's result. Aborting `signal` stops the run (its process group is killed);
   * aborting `stopWaiting` only stops this wait (it then rejects with the abort's reason).
   */
  result(taskId: TaskId, signal?: AbortSignal, stopWaiting?: AbortSignal): Promise<BashTaskResult> {
    return runResult(this.client, taskId, signal, stopWaiting);
  }

  /** Waits for a foreground run's result, moving it to the background after `autoBackgroundAfterMs` (see foreground.ts). */
  foregroundResult(
    taskId: TaskId,
    options: Parameters<typeof foregroundResult>[2] = {},
  ): Promise<ForegroundOutcome> {
    return foregroundResult(this.foreground, taskId, options);
  }

  /** Moves a foreground run to the background (see foreground.ts); false when it refused or did not answer. */
  moveToBackground(taskId: TaskId, owner: string | undefined): Promise<boolean> {
    return moveToBackground(this.foreground, taskId, owner);
  }

  private get foreground() {
    return {
      client: this.client,
      reads: this.reads,
      describeOwned: (taskId: string, owner: string | undefined) => this.describeOwned(taskId, owner),
      noticeFor: (owner: string | undefined) => this.noticeFor(owner),
    };
  }

  /**
   * Kills a running task's whole process group and waits for its end; a finished task is left as
   * it is. While no worker on the task's host answers, the kill is recorded and takes effect once
   * one is back: that answers `pending` at once. Only the owning session (or anyone, for an unowned
   * task) may kill. With `answersSession`, the kill's answer reaches the calling session, and the
   * task sends it no completion notice (see `KillOptions`).
   */
  async kill(
    taskId: string,
    callerSessionId: string | undefined,
    options: KillOptions = {},
  ): Promise<'killed' | 'already-finished' | 'pending'> {
    const description = await this.describeOwned(taskId, callerSessionId);
    // A task with no owner has no session to notify.
    const answersSession = options.answersSession === true && callerSessionId !== undefined;
    return killTask(this.client, description, { answersSession });
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
    return this.reads.read(await this.describeOwned(taskId, callerSessionId), options);
  }

  /**
   * A running task's output from `from` on, read on its host (waiting there up to `waitMs` for more),
   * without moving `bash_output`'s read position: an operator's view (`durable-bash logs --follow`).
   * Undefined when the task is not running on a host, or no worker there answered in time.
   */
  async peek(
    taskId: string,
    callerSessionId: string | undefined,
    from: ReadPosition,
    waitMs: number,
    terminal: TerminalReadMode = 'raw',
  ): Promise<HostRead | undefined> {
    return this.reads.peek(await this.describeOwned(taskId, callerSessionId), from, waitMs, terminal);
  }

  /**
   * Waits up to `timeoutMs` while the task runs with nothing new to read; resolves when there is
   * output to read, the task ended, or the time is up. Throws `ReadAbortedError` when `signal`
   * aborts the wait. Works with no worker alive.
   */
  async waitForOutput(
    taskId: string,
    callerSessionId: string | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
    options: Pick<WaitOptions, 'wholeLines' | 'wanted'> = {},
  ): Promise<void> {
    await this.reads.waitForOutput(
      await this.describeOwned(taskId, callerSessionId),
      timeoutMs,
      signal,
      options,
    );
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
      throw asClientError(this.client, err);
    }
  }

  /**
   * The raw bytes `[start, end)` of a task's stdout or stderr, read from its spill file on its host
   * (`hostQueue`, where it ran): at most WORKSPACE_TRANSFER_MAX_BYTES a call, fewer when the file is
   * shorter. Works after the task's end while its spill files are kept (the retention); moves no read
   * position. Only the owning session may read; `WorkspaceFileNotFoundError` once the file is gone.
   */
  async outputRange(
    taskId: string,
    callerSessionId: string | undefined,
    range: { hostQueue: string; stream: 'stdout' | 'stderr'; start: number; end: number },
  ): Promise<Uint8Array> {
    await this.describeOwned(taskId, callerSessionId);
    this.files ??= new WorkspaceFiles({ client: this.client, taskQueue: this.taskQueue });
    const { hostQueue, ...bytes } = range;
    return this.files.outputRange(hostQueue, { taskId, ...bytes });
  }

  /** What the server holds of a task now (its status, the tails of its output); moves no read position. */
  async snapshot(taskId: string, callerSessionId: string | undefined): Promise<TaskSnapshot> {
    const description = await this.describeOwned(taskId, callerSessionId);
    try {
      return await this.reads.snapshotOf(description);
    } catch (err) {
      throw asClientError(this.client, err);
    }
  }

  /**
   * The visibility query `list` sends for `filter`, to paste into the Web UI's or the CLI's
   * workflow list (the owner hashed, one hash per key in the keyring, when payloads are encrypted).
   */
  listQuery(filter: TaskFilter): string {
    return taskListQuery(filter, this.ownerHasher);
  }

  /**
   * Up to `limit` tasks matching `filter` in the server's visibility order (running ones first,
   * then the latest to end); the store may lag a moment behind a start or an end. With
   * `undeliveredNotices`, ended tasks whose notice never reached the session come marked (and
   * after the rest when the filter asked for running tasks only): see notice-marks.ts.
   */
  async list(filter: TaskFilter, limit = 100): Promise<TaskSummary[]> {
    const executions = await listExecutions(this.client, taskListQuery(filter, this.ownerHasher), limit);
    return withNoticeMarks(this.client, executions);
  }

  /**
   * The queue of the host a running task's command is on, waiting up to `waitMs` for one while the
   * task has none yet (undefined after that, or once the task has closed).
   */
  async hostQueueOf(description: WorkflowExecutionDescription, waitMs: number): Promise<string | undefined> {
    return (await this.reads.onHost(description, Date.now() + waitMs, undefined)).hostQueue;
  }

  /**
   * Describes a task's workflow behind the ownership fence: unknown and foreign tasks are refused,
   * and so is a task whose memo was not encrypted while this client's codec holds keys.
   */
  async describeOwned(
    taskId: string,
    callerSessionId: string | undefined,
  ): Promise<WorkflowExecutionDescription> {
    const description = await this.client
      .withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () => this.client.workflow.getHandle(taskId).describe())
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) throw new UnknownTaskError(taskId);
        throw asClientError(this.client, err);
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
    refuseUnencryptedMemo(description.memo, `task ${taskId}`);
    return description;
  }
}
