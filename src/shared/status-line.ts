/**
 * The status line `bash_output` ends with and a completion notice quotes. Pure (no Buffer, no
 * clock), so workflow code may use it.
 */
import type { BashTaskResult } from './task.js';

/** Where a task stands, as a reader reports it. */
export type TaskState =
  | { status: 'running' }
  | { status: 'completed'; exitCode: number }
  | { status: 'killed'; signal: string }
  /** Ended without an outcome: the command could not run, or its worker was lost. */
  | { status: 'failed' | 'lost'; reason: string };

export function statusLine(state: TaskState): string {
  switch (state.status) {
    case 'running':
      return '[status: running]';
    case 'completed':
      return `[status: completed, exit code: ${state.exitCode}]`;
    case 'killed':
      return `[status: killed by ${state.signal}]`;
    case 'failed':
    case 'lost':
      return `[status: ${state.status}: ${state.reason}]`;
    default: {
      const unreachable: never = state;
      return unreachable;
    }
  }
}

/** The state a finished run's result stands for: a signal death is a kill, anything else completed. */
export function finishedState(result: BashTaskResult): TaskState {
  return result.signal !== null
    ? { status: 'killed', signal: result.signal }
    : { status: 'completed', exitCode: result.exitCode ?? 0 };
}
