import { TimeoutType, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  defineUpdate,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  TimeoutFailure,
  upsertMemo,
  upsertSearchAttributes,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import {
  COMMAND_RETRY_INITIAL_INTERVAL_MS,
  COMMAND_RETRY_MAX_INTERVAL_MS,
  EAGER_ATTEMPT_SCHEDULE_TO_START_MS,
  HEARTBEAT_TIMEOUT_MS,
  KILL_GRACE_MS,
  STOP_COMMAND_TIMEOUT_MS,
} from '../shared/limits.js';
import { noticeText } from '../shared/notice.js';
import { CONTROL_QUEUE_PATCH } from '../shared/patches.js';
import { outputReaderId } from '../shared/read-position.js';
import { statusSearchAttribute } from '../shared/search-attributes.js';
import {
  failedState,
  finishedState,
  isLost,
  isWorkerLoss,
  KILLED_BEFORE_START,
  statusLine,
  type TaskState,
} from '../shared/status-line.js';
import type {
  BashTaskInput,
  BashTaskResult,
  CommandHost,
  CommandOutcome,
  CommandSpec,
  NoticeTarget,
  StopResult,
  TaskId,
} from '../shared/task.js';
import { AttemptFailureType, RunFailureType, TaskStatus } from '../shared/task.js';
import { controlTaskQueue } from '../shared/task-queues.js';
import { completionNotice } from './completion-notice.js';
import { outputReaderStartedSignal, taskEndedSignal } from './reader-signals.js';
import { handleStdinWrites } from './stdin-writes.js';

/** What a move to the background needs: where the completion notice goes, if anywhere. */
export interface MoveToBackgroundRequest {
  notice?: NoticeTarget;
  /**
   * On the server's clock: a move the workflow takes later than this is refused, since the caller
   * has stopped waiting for it (its call goes on in the foreground). Absent from older callers.
   */
  expiresAtMs?: number;
}

/**
 * Moves a foreground run to the background: its timeout no longer applies and it ends with a
 * completion notice, as if started with `run_in_background`. Refused once the command has ended or
 * its timeout has fired, so an accepted move is one the run takes.
 */
export const moveToBackgroundUpdate = defineUpdate<void, [MoveToBackgroundRequest]>('moveToBackground');

/** The patch a moved run records when the update applies (replays of older runs never see the update). */
const MOVE_TO_BACKGROUND_PATCH = 'move-to-background';

/** The run's foreground or background standing, which a move to the background changes. */
interface Standing {
  background: boolean;
  notice: NoticeTarget | undefined;
  /** False once the run ended, its timeout fired, or it runs in a way that cannot move (the shared queue). */
  movable: boolean;
  /** Cancels the foreground timer that runs now. */
  cancelTimeout?: () => void;
  /** Lets go of the foreground attempt that runs now (the command keeps running), for one without a deadline. */
  release?: () => void;
  /** The command's host, once chosen: where writes to its stdin go. */
  host?: CommandHost;
  /** The run has its outcome (the command ended, or it never will run). */
  ended: boolean;
}

/** A foreground spec as a background one: no timeout, and a background task's spill files. */
function inBackground(spec: CommandSpec): CommandSpec {
  const { timeoutMs, ...rest } = spec;
  return { ...rest, background: true };
}

const { resolveCommand } = proxyLocalActivities<CommandActivities>({
  // Pure arithmetic on the worker's config.
  startToCloseTimeout: '10 seconds',
});

/** Time a background command may run before Temporal gives up on it. */
const BACKGROUND_RUN_LIMIT = '365 days';

/** Time one attempt of a foreground command may take: its timeout, the kill's grace, then slack. */
function attemptLimit(spec: CommandSpec) {
  return spec.timeoutMs === undefined
    ? BACKGROUND_RUN_LIMIT
    : spec.timeoutMs + KILL_GRACE_MS + HEARTBEAT_TIMEOUT_MS;
}

/** What every attempt of the command activity has, on whichever queue it runs. */
function attemptOptions(spec: CommandSpec) {
  return {
    startToCloseTimeout: attemptLimit(spec),
    // How a worker that died mid-command is noticed (a restarted one says so at once).
    heartbeatTimeout: spec.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS,
    // A kill's outcome (the signal, the last output) comes back from the activity.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}

/** The command activity of runs recorded before per-host queues: one attempt on the shared queue. */
function sharedQueueCommand(spec: CommandSpec) {
  return proxyActivities<CommandActivities>({
    ...attemptOptions(spec),
    taskQueue: spec.taskQueue,
    retry: { maximumAttempts: 1 },
  }).runCommand;
}

/**
 * The activities on the command's host. Every attempt of the command activity is idempotent on its
 * host (it re-attaches to the command's supervisor, or returns the end it recorded), so a worker
 * that died is simply retried there; a host whose worker stays away past the lost window ends the
 * task lost.
 */
function hostActivities(spec: CommandSpec, hostQueue: string, lostAfterMs: number) {
  const onHost = {
    taskQueue: hostQueue,
    // A dead host never polls again: this bounds each wait for its worker (not retried).
    scheduleToStartTimeout: lostAfterMs,
    retry: {
      initialInterval: COMMAND_RETRY_INITIAL_INTERVAL_MS,
      backoffCoefficient: 2,
      maximumInterval: COMMAND_RETRY_MAX_INTERVAL_MS,
    },
  };
  const stopOn = (taskQueue: string) =>
    proxyActivities<CommandActivities>({
      ...onHost,
      taskQueue,
      startToCloseTimeout: STOP_COMMAND_TIMEOUT_MS,
    }).stopCommand;
  return {
    runCommand: proxyActivities<CommandActivities>({ ...onHost, ...attemptOptions(spec) }).runCommand,
    // On the host's control queue, whose slots running commands never take; runs recorded before
    // it sent stops to the host queue.
    stopCommand: (stopped: CommandSpec) =>
      patched(CONTROL_QUEUE_PATCH)
        ? stopOn(controlTaskQueue(hostQueue))(stopped)
        : stopOn(hostQueue)(stopped),
  };
}

/**
 * One run of one command. Resolves the request against the worker's config, runs the command
 * activity, and for a foreground run ends it when its timeout fires. A cancellation of the workflow
 * (a kill, an aborted call) reaches the activity, which ends the process group and reports how.
 * A background task with a notice target then starts its completion notice, and ends as it would
 * without one.
 */
export async function bashTask(input: BashTaskInput): Promise<BashTaskResult> {
  let hasReader = false;
  setHandler(outputReaderStartedSignal, () => {
    hasReader = true;
  });
  const standing: Standing = {
    background: input.background,
    notice: input.notice,
    movable: !input.background,
    ended: false,
  };
  handleStdinWrites({
    taskId: input.taskId,
    keepStdinOpen: input.background && input.keepStdinOpen === true,
    host: () => standing.host,
    ended: () => standing.ended,
  });
  setHandler(
    moveToBackgroundUpdate,
    (request) => {
      patched(MOVE_TO_BACKGROUND_PATCH);
      standing.background = true;
      standing.notice = request.notice;
      standing.movable = false;
      standing.cancelTimeout?.();
      standing.release?.();
      // Listings and the command's host (see `TaskRuns.movedToBackground`) read the move here.
      upsertMemo({ background: true });
    },
    {
      validator: (request) => {
        if (!standing.movable)
          throw new Error(
            `task ${input.taskId} cannot move to the background: it is not running in the foreground`,
          );
        if (request.expiresAtMs !== undefined && Date.now() >= request.expiresAtMs)
          throw new Error(`task ${input.taskId} took the move to the background too late`);
      },
    },
  );
  const run = await runTask(input, standing).then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  standing.movable = false;
  standing.ended = true;
  // A write to stdin in flight answers before the run closes (it is told the command ended); a
  // killed run waits too (its cancellation must not cut the wait short).
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  if (standing.background) {
    const { notice } = standing;
    await Promise.all([
      notice
        ? startNotice(input.taskId, notice, run.ok ? finishedState(run.result) : endedState(run.error))
        : undefined,
      // Runs recorded before readers were told are replayed without the signal.
      hasReader && patched(TELL_READER_PATCH) ? tellReader(input.taskId) : undefined,
    ]);
  }
  if (!run.ok) throw run.error;
  return run.result;
}

async function runTask(input: BashTaskInput, standing: Standing): Promise<BashTaskResult> {
  const resolved = await resolveCommand(input);
  const current = () => (standing.background && !resolved.background ? inBackground(resolved) : resolved);
  if (resolved.lostAfterMs === undefined) {
    standing.movable = false;
    return runOnSharedQueue(current(), standing);
  }
  const host =
    resolved.hostQueue !== undefined && resolved.hostId !== undefined
      ? { hostQueue: resolved.hostQueue, hostId: resolved.hostId }
      : await chooseHostFor(current(), resolved.lostAfterMs, standing);
  standing.host = host;
  return runOnHost(current(), host, resolved.lostAfterMs, standing);
}

/**
 * The command's host, picked by whichever worker of the command queue answers first. The foreground
 * timeout and a kill already hold while no worker answers; none within the lost window ends it lost.
 */
async function chooseHostFor(
  spec: CommandSpec,
  lostAfterMs: number,
  standing: Standing,
): Promise<CommandHost> {
  const { chooseHost } = proxyActivities<CommandActivities>({
    taskQueue: spec.taskQueue,
    scheduleToStartTimeout: lostAfterMs,
    startToCloseTimeout: '10 seconds',
  });
  const choosing = new CancellationScope();
  const timeout = startTimeout(spec, () => choosing.cancel(), standing);
  try {
    return await choosing.run(() => chooseHost());
  } catch (err) {
    const firedAfterMs = timeout.firedAfterMs();
    if (firedAfterMs !== undefined && isCancellation(err)) throw neverStarted(spec, firedAfterMs);
    if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
      setStatus(TaskStatus.lost);
      throw ApplicationFailure.create({
        type: RunFailureType.commandLost,
        message: `no worker of task queue ${spec.taskQueue} took the command within ${lostAfterMs}ms`,
        nonRetryable: true,
      });
    }
    setStatus(TaskStatus.failed);
    throw err;
  } finally {
    timeout.cancel();
  }
}

/**
 * Runs the command on its host. A kill (the workflow's cancellation) or the timeout goes to the
 * host twice: as the cancellation of the running attempt, which ends the group and reports the
 * outcome, and as a stop activity of its own. The stop reaches the host when no attempt runs (the
 * server completes such a cancellation without telling any worker) and when an attempt that was
 * asked to stop is retried without the request; its recorded end is the truth. It takes effect as
 * soon as a worker on that host polls again.
 */
async function runOnHost(
  spec: CommandSpec,
  host: CommandHost,
  lostAfterMs: number,
  standing: Standing,
): Promise<BashTaskResult> {
  const { runCommand, stopCommand } = hostActivities(spec, host.hostQueue, lostAfterMs);
  let command = new CancellationScope();
  // The eager attempt's last heartbeat, when the host queue's attempts took over from it: a task
  // lost before any of those heartbeated ends with the output the server last knew.
  let eagerProgress: unknown;
  let outcome = command
    .run(async () => {
      // The first attempt on the workflow's own queue, when this workflow's worker is the host:
      // it is handed to that worker with the workflow task's completion (eager dispatch), a
      // matching round trip less for every run. Any other worker refuses it (WrongHost) without
      // starting anything, and a lost worker leaves it to the host queue's attempts, which
      // re-attach.
      // (`resolveCommand` names a host queue only when its worker serves the command queue itself.)
      if (spec.hostQueue !== undefined && patched(EAGER_PATCH)) {
        try {
          return await eagerCommand(spec)(spec);
        } catch (err) {
          if (!continuesOnHost(err)) throw err;
          if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure)
            eagerProgress = err.cause.lastHeartbeatDetails;
          if (commandStarted(err)) return runCommand({ ...spec, commandStarted: true });
        }
      }
      return runCommand(spec);
    })
    .then(
      (ended) => ({ ok: true as const, ended }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  let stopping: Promise<StopResult> | undefined;
  const stop = () => {
    // A run being killed or timed out can no longer move to the background.
    standing.movable = false;
    stopping ??= CancellationScope.nonCancellable(() => stopCommand(spec));
    command.cancel();
  };
  const timeout = startTimeout(spec, stop, standing);
  CancellationScope.current().cancelRequested.catch(stop);
  let released = false;
  if (spec.timeoutMs !== undefined) {
    standing.release = () => {
      released = true;
      command.cancel();
      // The cancellation reaches the attempt only in a heartbeat's response; this, at once.
      if (patched(RELEASE_ON_HOST_PATCH)) void releaseOnHost(spec.taskId, host.hostQueue);
    };
  }
  try {
    let settled = await outcome;
    standing.release = undefined;
    if (released && !settled.ok && stopping === undefined) {
      // Moved to the background: the foreground attempt let go of the command (or never started
      // it), and an attempt without the foreground's deadline and time limit takes over.
      const background = inBackground(spec);
      const commandStarted = isReleased(settled.error);
      command = new CancellationScope();
      outcome = command
        .run(() =>
          hostActivities(background, host.hostQueue, lostAfterMs).runCommand({
            ...background,
            ...(commandStarted ? { commandStarted } : {}),
          }),
        )
        .then(
          (ended) => ({ ok: true as const, ended }),
          (error: unknown) => ({ ok: false as const, error }),
        );
      settled = await outcome;
    }
    // An attempt's outcome comes from the supervisor's recorded end, as a stop's would: the
    // command has ended, and its tails are whole.
    if (settled.ok) return finish(resultOf(spec, settled.ended, timeout.firedAfterMs()));
    if (stopping === undefined) throw endWithoutOutcome(settled.error, host, lostAfterMs, eagerProgress);
    let stopped: StopResult;
    try {
      stopped = await stopping;
    } catch (stopError) {
      throw endWithoutOutcome(stopError, host, lostAfterMs, eagerProgress);
    }
    if (stopped.kind === 'ended') return finish(resultOf(spec, stopped.outcome, timeout.firedAfterMs()));
    const firedAfterMs = timeout.firedAfterMs();
    if (firedAfterMs !== undefined) throw neverStarted(spec, firedAfterMs);
    // Killed before the command started: the run ends cancelled.
    setStatus(TaskStatus.failed);
    throw settled.error;
  } finally {
    timeout.cancel();
  }
}

const EAGER_PATCH = 'command-first-attempt-eager';

/** Runs recorded before the move told the host (the cancellation alone let go of the attempt). */
const RELEASE_ON_HOST_PATCH = 'move-releases-on-host';

/** Tells the command's host that the foreground attempt may let go; a host that does not answer has no attempt running. */
function releaseOnHost(taskId: TaskId, hostQueue: string): Promise<void> {
  const { releaseCommand } = proxyActivities<CommandActivities>({
    taskQueue: controlTaskQueue(hostQueue),
    scheduleToStartTimeout: RELEASE_TIMEOUT_MS,
    startToCloseTimeout: RELEASE_TIMEOUT_MS,
    retry: { maximumAttempts: 1 },
  });
  return CancellationScope.nonCancellable(() => releaseCommand(taskId)).catch(() => undefined);
}

const RELEASE_TIMEOUT_MS = 10_000;

/** The command's first attempt, on the workflow's own queue (eager dispatch); never retried there. */
function eagerCommand(spec: CommandSpec) {
  return proxyActivities<CommandActivities>({
    ...attemptOptions(spec),
    // A worker that does not take it soon (no eager slot, no worker) leaves it to the host queue.
    scheduleToStartTimeout: EAGER_ATTEMPT_SCHEDULE_TO_START_MS,
    retry: { maximumAttempts: 1 },
  }).runCommand;
}

/**
 * The eager attempt had started the command: it heartbeated, or a restarted worker failed it after
 * finding its supervisor. The host queue's attempts then never start it again, even if its records
 * are gone.
 */
function commandStarted(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.cause instanceof TimeoutFailure) return err.cause.lastHeartbeatDetails !== undefined;
  return err.cause instanceof ApplicationFailure && err.cause.type === AttemptFailureType.workerRestarted;
}

/** The attempt let go of a command it had attached to (the run moved to the background). */
function isReleased(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === AttemptFailureType.released
  );
}

/**
 * The eager attempt ended without the command's end, in a way the host queue's attempts can take
 * over: its worker was lost or restarted, or it was not the host. A kill, or a failure of the
 * command itself (no such workdir, bash would not start), is final.
 */
function continuesOnHost(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.cause instanceof TimeoutFailure) return true;
  return err.cause instanceof ApplicationFailure && !err.cause.nonRetryable;
}

/** The runs recorded before per-host queues: one attempt, and a lost worker loses the task. */
async function runOnSharedQueue(spec: CommandSpec, standing: Standing): Promise<BashTaskResult> {
  const command = new CancellationScope();
  const outcome = command.run(() => sharedQueueCommand(spec)(spec));
  const timeout = startTimeout(spec, () => command.cancel(), standing);
  try {
    return finish(resultOf(spec, await outcome, timeout.firedAfterMs()));
  } catch (err) {
    const firedAfterMs = timeout.firedAfterMs();
    if (firedAfterMs !== undefined && isCancellation(err)) {
      // The timer fired and the cancellation came back without an outcome: no worker ever ran it.
      throw neverStarted(spec, firedAfterMs);
    }
    setStatus(isWorkerLoss(err) ? TaskStatus.lost : TaskStatus.failed);
    throw err;
  } finally {
    timeout.cancel();
  }
}

/**
 * The foreground timeout: a workflow timer, so it holds even while no worker runs the command. A
 * move to the background cancels it; once it fired, the run can no longer move.
 */
function startTimeout(spec: CommandSpec, onFire: () => void, standing: Standing) {
  let firedAfterMs: number | undefined;
  const timer = new CancellationScope();
  const { timeoutMs } = spec;
  if (timeoutMs !== undefined) {
    timer
      .run(() => sleep(timeoutMs))
      .then(
        () => {
          firedAfterMs = timeoutMs;
          standing.movable = false;
          onFire();
        },
        () => undefined, // Cancelled: the command ended first, or the run moved to the background.
      );
  }
  const cancel = () => timer.cancel();
  standing.cancelTimeout = cancel;
  return { firedAfterMs: () => firedAfterMs, cancel };
}

/**
 * The run's result from a command's outcome: timed out when the workflow's timer fired or the
 * activity's own copy of the deadline did, whichever the workflow heard of first.
 */
function resultOf(
  spec: CommandSpec,
  outcome: CommandOutcome,
  timerFiredAfterMs: number | undefined,
): BashTaskResult {
  const { timedOut, ...ended } = outcome;
  return { ...ended, timedOutAfterMs: timerFiredAfterMs ?? (timedOut ? spec.timeoutMs : undefined) };
}

function finish(result: BashTaskResult): BashTaskResult {
  setStatus(endStatus(result));
  return result;
}

function neverStarted(spec: CommandSpec, firedAfterMs: number): ApplicationFailure {
  setStatus(TaskStatus.lost);
  return ApplicationFailure.create({
    type: RunFailureType.neverStarted,
    message: `task ${spec.taskId} timed out after ${firedAfterMs}ms before any worker started the command`,
    nonRetryable: true,
  });
}

/**
 * The failure a run ends with when its command gave no outcome, with its status set. A host whose
 * worker stayed away past the lost window is named; the output its worker last heartbeated rides
 * along, so readers still see it.
 */
function endWithoutOutcome(
  err: unknown,
  host: CommandHost,
  lostAfterMs: number,
  earlierProgress?: unknown,
): unknown {
  if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
    if (err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START) {
      setStatus(TaskStatus.lost);
      const progress = err.cause.lastHeartbeatDetails ?? earlierProgress;
      return ApplicationFailure.create({
        type: RunFailureType.commandLost,
        message: `no worker on its host ${host.hostId} came back within ${lostAfterMs}ms; the exit status is unknown`,
        nonRetryable: true,
        details: progress === undefined ? [] : [progress],
      });
    }
  }
  setStatus(isLost(err) ? TaskStatus.lost : TaskStatus.failed);
  return err;
}

const TELL_READER_PATCH = 'tell-output-reader-the-task-ended';

/** Tells the task's output reader that the task ended, so it can end once idle. */
async function tellReader(taskId: TaskId): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(outputReaderId(taskId))
      .signal(taskEndedSignal)
      .catch(() => undefined),
  );
}

/**
 * Starts the notice as an abandoned child and waits only for its start (a child not yet started
 * when its parent closes may never start). It runs on this task queue; only its inject activity
 * goes to the agent host. A notice that cannot start is logged, never the task's failure.
 */
async function startNotice(taskId: TaskId, target: NoticeTarget, state: TaskState): Promise<void> {
  try {
    // A kill cancels this workflow; the notice must still start.
    await CancellationScope.nonCancellable(() =>
      startChild(completionNotice, {
        workflowId: `${taskId}-notice`,
        args: [{ ...target, content: noticeText(taskId, statusLine(state)) }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A task reset and run again must not notify twice: its notice id is taken.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `Completion notice for ${taskId}`,
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      log.info('completion notice already sent', { taskId });
    } else {
      log.warn('completion notice could not start', { taskId, error: String(err) });
    }
  }
}

/** The state a run that threw stands for; a kill before any worker took the command has its own reason. */
function endedState(err: unknown): TaskState {
  if (isCancellation(err)) return { status: 'failed', reason: KILLED_BEFORE_START };
  return failedState(err);
}

function endStatus(outcome: CommandOutcome): TaskStatus {
  return outcome.signal === null ? TaskStatus.completed : TaskStatus.killed;
}

function setStatus(status: TaskStatus): void {
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
}
