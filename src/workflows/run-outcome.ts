/**
 * How a run ends: its result from the command's outcome, the failure it ends with when there is
 * none, and its status search attribute.
 */
import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { statusSearchAttribute } from '../shared/search-attributes.js';
import { isKilledBeforeStart, isLost } from '../shared/status-line.js';
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
  setStatus(failedStatus(err));
  return err;
}

/**
 * The status search attribute of a run that ends without an outcome: killed when a kill came before
 * the command started, lost when its end cannot be known, else failed. (A change of value alone
 * issues the same upsert command, so runs of 0.2.0 that recorded `failed` replay unchanged.)
 */
export function failedStatus(err: unknown): TaskStatus {
  if (isKilledBeforeStart(err)) return TaskStatus.killed;
  return isLost(err) ? TaskStatus.lost : TaskStatus.failed;
}

export function endStatus(outcome: CommandOutcome): TaskStatus {
  return outcome.signal === null ? TaskStatus.completed : TaskStatus.killed;
}

export function setStatus(status: TaskStatus): void {
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
}
