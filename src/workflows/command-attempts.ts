/**
 * How a run's command activities are scheduled (their queues, timeouts and retries), and what an
 * attempt's failure says: whether it had started the command, let go of it, or can go on on its host.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
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
import type { CommandSpec, TaskId } from '../shared/task.js';
import { AttemptFailureType } from '../shared/task.js';
import { controlTaskQueue } from '../shared/task-queues.js';

/** A foreground spec as a background one: no timeout, and a background task's spill files. */
export function inBackground(spec: CommandSpec): CommandSpec {
  const { timeoutMs, deadlineAtMs, hostKeepsDeadline, ...rest } = spec;
  return { ...rest, background: true };
}

export const { resolveCommand } = proxyLocalActivities<CommandActivities>({
  // Pure arithmetic on the worker's config.
  startToCloseTimeout: '10 seconds',
});

/** Time a background command may run before Temporal gives up on it. */
const BACKGROUND_RUN_LIMIT = '365 days';

/** Time one attempt of a foreground command may take: its timeout, the kill's grace, then slack. */
export function attemptLimit(spec: CommandSpec) {
  return spec.timeoutMs === undefined
    ? BACKGROUND_RUN_LIMIT
    : spec.timeoutMs + KILL_GRACE_MS + HEARTBEAT_TIMEOUT_MS;
}

/** What every attempt of the command activity has, on whichever queue it runs. */
export function attemptOptions(spec: CommandSpec) {
  return {
    startToCloseTimeout: attemptLimit(spec),
    // How a worker that died mid-command is noticed (a restarted one says so at once).
    heartbeatTimeout: spec.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS,
    // A kill's outcome (the signal, the last output) comes back from the activity.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}

/**
 * The activities on the command's host. Every attempt of the command activity is idempotent on its
 * host (it re-attaches to the command's supervisor, or returns the end it recorded), so a worker
 * that died is simply retried there; a host whose worker stays away past the lost window ends the
 * task lost.
 */
export function hostActivities(spec: CommandSpec, hostQueue: string, lostAfterMs: number) {
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
    // On the host's control queue, whose slots running commands never take.
    stopCommand: stopOn(controlTaskQueue(hostQueue)),
  };
}

/** How long a release may wait for the host: it is only a courtesy, the host lets go by itself when the run closes. */
const RELEASE_TIMEOUT_MS = 10_000;

/** Tells the command's host that the foreground attempt may let go; a host that does not answer has no attempt running. */
export function releaseOnHost(taskId: TaskId, hostQueue: string): Promise<void> {
  const { releaseCommand } = proxyActivities<CommandActivities>({
    taskQueue: controlTaskQueue(hostQueue),
    scheduleToStartTimeout: RELEASE_TIMEOUT_MS,
    startToCloseTimeout: RELEASE_TIMEOUT_MS,
    retry: { maximumAttempts: 1 },
  });
  return CancellationScope.nonCancellable(() => releaseCommand(taskId)).catch(() => undefined);
}

/** The command's first attempt, on the workflow's own queue (eager dispatch); never retried there. */
export function eagerCommand(spec: CommandSpec) {
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
export function commandStarted(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.cause instanceof TimeoutFailure) return err.cause.lastHeartbeatDetails !== undefined;
  return err.cause instanceof ApplicationFailure && err.cause.type === AttemptFailureType.workerRestarted;
}

/** The run's deadline passed before any attempt started its command (see `CommandSpec.deadlineAtMs`). */
export function isPastDeadline(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === AttemptFailureType.pastDeadline
  );
}

/** The attempt let go of a command it had attached to (the run moved to the background). */
export function isReleased(err: unknown): boolean {
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
export function continuesOnHost(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.cause instanceof TimeoutFailure) return true;
  return err.cause instanceof ApplicationFailure && !err.cause.nonRetryable;
}
