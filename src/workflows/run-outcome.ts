/**
 * How a run ends: its result from the command's outcome, the failure it ends with when there is
 * none, and its status search attribute.
 */
import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { statusSearchAttribute } from '../shared/search-attributes.js';
import { failedState, isLost, KILLED_BEFORE_START, type TaskState } from '../shared/status-line.js';
import type { BashTaskResult, CommandHost, CommandOutcome, CommandSpec } from '../shared/task.js';
import { RunFailureType, TaskStatus } from '../shared/task.js';

/**
 * The run's result from a command's outcome: timed out when the workflow's timer fired or the
 * activity's own copy of the deadline did, whichever the workflow heard of first.
 */
export function resultOf(
  spec: CommandSpec,
  outcome: CommandOutcome,
  timerFiredAfterMs: number | undefined,
): BashTaskResult {
  const { timedOut, stoppedWhileRunning, ...ended } = outcome;
  return { ...ended, timedOutAfterMs: timerFiredAfterMs ?? (timedOut ? spec.timeoutMs : undefined) };
}

export function finish(result: BashTaskResult): BashTaskResult {
  setStatus(endStatus(result));
  return result;
}

export function neverStarted(spec: CommandSpec, firedAfterMs: number): ApplicationFailure {
  setStatus(TaskStatus.lost);
  return ApplicationFailure.create({
    type: RunFailureType.neverStarted,
    message: `task ${spec.taskId} timed out after ${firedAfterMs}ms before any worker started the command`,
    nonRetryable: true,
  });
}

/** No worker on the command's host took its attempt within the lost window: the host is lost. */
export function isHostLoss(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
  );
}

/**
 * The failure a run ends with when its command gave no outcome, with its status set. A host whose
 * worker stayed away past the lost window is named; the output its worker last heartbeated rides
 * along, so readers still see it.
 */
export function endWithoutOutcome(
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

/** The state a run that threw stands for; a kill before any worker took the command has its own reason. */
export function endedState(err: unknown): TaskState {
  if (isCancellation(err)) return { status: 'failed', reason: KILLED_BEFORE_START };
  return failedState(err);
}

export function endStatus(outcome: CommandOutcome): TaskStatus {
  return outcome.signal === null ? TaskStatus.completed : TaskStatus.killed;
}

export function setStatus(status: TaskStatus): void {
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
}
