// From common, not client: workflow code (`durable-bash/workflow`) reports a child's failure with it.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { firstLine } from './checks.js';
import { RunFailedError } from './errors.js';
import { isKilledBeforeStart, KILLED_BEFORE_START } from './status-line.js';
import { RunFailureType, TaskStatus } from './task.js';

/**
 * Why a run's workflow failed, as one line: it was killed before its command started, its worker
 * was lost, or the command could not run.
 * `err` is the client's `WorkflowFailedError` or a parent's `ChildWorkflowFailure`: its cause is
 * the run's failure.
 */
export function runFailure(taskId: string, err: Error): RunFailedError {
  const activity = err.cause instanceof ActivityFailure ? err.cause : undefined;
  if (activity?.cause instanceof TimeoutFailure) {
    return new RunFailedError(
      taskId,
      TaskStatus.lost,
      `task ${taskId} was lost: its worker stopped answering`,
    );
  }
  // A kill before the command started: the run was cancelled, or met the tombstone the kill left.
  if (isKilledBeforeStart(err.cause))
    return new RunFailedError(taskId, TaskStatus.killed, KILLED_BEFORE_START);
  if (activity?.cause instanceof ApplicationFailure) {
    return new RunFailedError(taskId, TaskStatus.failed, activity.cause.message);
  }
  if (err.cause instanceof ApplicationFailure && err.cause.type === RunFailureType.neverStarted) {
    return new RunFailedError(taskId, TaskStatus.lost, err.cause.message);
  }
  return new RunFailedError(taskId, TaskStatus.failed, firstLine(err.cause ?? err));
}
