/**
 * The status line `bash_output` ends with and a completion notice quotes. Pure (no Buffer, no
 * clock), so workflow code may use it; the workflow and the client read a run's failure the same way.
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/common';
import { restartsNote } from './host-restart.js';
import { type BashTaskResult, RunFailureType } from './task.js';

/**
 * Where a task stands, as a reader reports it; `restarts`, for a task whose command started again
 * after its host was lost (`on_host_loss: "restart"`).
 */
export type TaskState = (
  | { status: 'running' }
  | { status: 'completed'; exitCode: number }
  /** Killed: by `signal`, or with none before its command started (nothing ran). */
  | { status: 'killed'; signal?: string }
  /** Ended without an outcome: the command could not run, or its worker was lost. */
  | { status: 'failed' | 'lost'; reason: string }
) & { restarts?: number };

export function statusLine(state: TaskState): string {
  return `[status: ${statusText(state)}${restartsNote(state.restarts)}]`;
}

function statusText(state: TaskState): string {
  switch (state.status) {
    case 'running':
      return 'running';
    case 'completed':
      return `completed, exit code: ${state.exitCode}`;
    case 'killed':
      return state.signal === undefined ? KILLED_BEFORE_START : `killed by ${state.signal}`;
    case 'failed':
    case 'lost':
      return `${state.status}: ${state.reason}`;
    default: {
      const unreachable: never = state;
      return unreachable;
    }
  }
}

/** The state a finished run's result stands for: a signal death is a kill, anything else completed. */
export function finishedState(result: BashTaskResult): TaskState {
  const restarts = result.restarts !== undefined ? { restarts: result.restarts } : {};
  return result.signal !== null
    ? { status: 'killed', signal: result.signal, ...restarts }
    : { status: 'completed', exitCode: result.exitCode ?? 0, ...restarts };
}

/**
 * The status of a run killed before its command started (its workflow ends cancelled, or failed
 * with the tombstone its kill left on the host): a kill all the same, never a failure.
 */
export const KILLED_BEFORE_START = 'killed before the command started';

/**
 * The state a run that ended without an outcome stands for, from the failure its workflow threw: a
 * kill before the command started is killed; a timed-out command activity is a lost worker;
 * otherwise the first line of what the command's failure said.
 */
export function failedState(failure: unknown): TaskState {
  if (isKilledBeforeStart(failure)) return { status: 'killed' };
  if (isLost(failure)) return { status: 'lost', reason: lostReason(failure) };
  const cause =
    failure instanceof ActivityFailure && failure.cause instanceof ApplicationFailure
      ? failure.cause
      : failure;
  const message = cause instanceof Error ? cause.message : String(cause);
  return { status: 'failed', reason: message.split('\n')[0] ?? '' };
}

/**
 * The run was killed before its command started: cancelled (a kill before any worker started it),
 * or failed with the tombstone a kill left on its host between the claim and the start.
 */
export function isKilledBeforeStart(failure: unknown): boolean {
  if (failure instanceof CancelledFailure) return true;
  if (failure instanceof ActivityFailure && failure.cause instanceof CancelledFailure) return true;
  return applicationFailure(failure)?.type === RunFailureType.killedBeforeStart;
}

/** The command activity timed out: its worker stopped heartbeating. */
export function isWorkerLoss(failure: unknown): boolean {
  return failure instanceof ActivityFailure && failure.cause instanceof TimeoutFailure;
}

/**
 * The run ended without knowing how its command ended: its worker was lost (runs before per-host
 * queues), the timeout fired before any worker took it, or the command's end cannot be known
 * (supervisor killed, host rebooted, no worker came back to its host).
 */
export function isLost(failure: unknown): boolean {
  if (isWorkerLoss(failure)) return true;
  const type = applicationFailure(failure)?.type;
  return type === RunFailureType.neverStarted || type === RunFailureType.commandLost;
}

function lostReason(failure: unknown): string {
  if (isWorkerLoss(failure)) return 'its worker stopped answering';
  return applicationFailure(failure)?.message ?? 'its worker stopped answering';
}

/** The application failure a run failed with, directly or as its command activity's cause. */
function applicationFailure(failure: unknown): ApplicationFailure | undefined {
  if (failure instanceof ApplicationFailure) return failure;
  if (failure instanceof ActivityFailure && failure.cause instanceof ApplicationFailure) return failure.cause;
  return undefined;
}
