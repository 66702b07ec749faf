/**
 * The attempt registry: which tasks' commands this worker follows now, and the little it remembers
 * of those it let go of. The command activity holds its task here while it runs; the move's
 * release, the host's closed-run check, reads and the orphan scan find the attempt through it.
 */

import { hostMetrics } from './host-metrics.js';
import type { LineMonitor } from './monitor/line-monitor.js';
import { ReportedEnds } from './reported-ends.js';
import { TerminalLogs } from './terminal/terminal-logs.js';

/** What the command activity needs to know of the task's workflow, from the worker's client. */
export interface TaskRuns {
  /** True when the task's workflow is closed (terminated, reset away, timed out), false when it runs, undefined if unknown. */
  isClosed(taskId: string): Promise<boolean | undefined>;
  /** True when the task's run moved to the background (its memo says so), false when not, undefined if unknown. */
  movedToBackground(taskId: string): Promise<boolean | undefined>;
}

/** How many times a foreground attempt asks the server whether its run moved, before it takes "no". */
const MOVED_CHECK_ATTEMPTS = 3;

/** Whether the task's run moved to the background; an unanswered question is asked again, then taken as no. */
export async function movedToBackground(runs: TaskRuns, taskId: string): Promise<boolean> {
  for (let attempt = 0; attempt < MOVED_CHECK_ATTEMPTS; attempt++) {
    const answer = await runs.movedToBackground(taskId);
    if (answer !== undefined) return answer;
  }
  return false;
}

/**
 * An attempt of the command activity running in this worker, as the worker's other parts reach it:
 * the move's release (`releaseCommand`) and the host's closed-run check (`checkClosedRuns`), which
 * take the place of a cancellation that would otherwise wait for a heartbeat's response.
 */
export interface AttachedAttempt {
  /** The workflow run the attempt belongs to. */
  runId: string;
  /** The run moved to the background: a foreground attempt lets go of its command (once the server's record says so). */
  release(): void;
  /** The server says the attempt's run has closed: the command ends if its task has, else the attempt lets go. */
  runClosed(): void;
  /** The task's monitor, while the attempt follows a background task that has a notice target. */
  monitor?: LineMonitor;
  /** For a background attempt: whether its task has a notice target (it can take a monitor). */
  monitorable?: boolean;
}

/** The tasks whose commands this worker is attached to now, by task id (the orphan scan leaves them alone). */
export class AttachedTasks extends Map<string, AttachedAttempt> {
  /**
   * Tasks whose command ended and whose run needs nothing more of this worker: an attempt here
   * returned the end, or the server says the run is past its command. The orphan scan asks the
   * server about any other recent end, in case an attempt to report it was lost on its way here.
   */
  readonly settled = new Set<string>();
  /**
   * When each task's last attempt here let go of it: the server hears of that attempt's end a
   * moment later, and until then the scan must not take it for one that never arrived.
   */
  readonly detachedAtMs = new Map<string, number>();
  /** The screens of this host's terminal tasks, as reads, writes and ends render them. */
  readonly terminals = new TerminalLogs();
  /** The ends attempts here returned, until the server is seen holding them. */
  readonly reportedEnds = new ReportedEnds();

  /**
   * Holds `taskId` attached to a new attempt of run `runId` while `run` follows its command:
   * attached from the start, so the orphan scan never takes it for a dead worker's; settled when it
   * returns the end; detached when it is done, unless a newer attempt took its place meanwhile.
   */
  async hold<T>(taskId: string, runId: string, run: (attempt: AttachedAttempt) => Promise<T>): Promise<T> {
    const attempt: AttachedAttempt = {
      runId,
      release: () => undefined,
      runClosed: () => undefined,
    };
    this.set(taskId, attempt);
    hostMetrics.attached();
    try {
      const result = await run(attempt);
      this.settled.add(taskId);
      return result;
    } catch (err) {
      hostMetrics.lostIf(err);
      throw err;
    } finally {
      hostMetrics.detached();
      if (this.get(taskId) === attempt) {
        this.delete(taskId);
        this.detachedAtMs.set(taskId, Date.now());
      }
    }
  }
}
