/**
 * A run's standing, foreground or background, which a move to the background changes, and the
 * foreground timeout that a move cancels.
 */
import { CancellationScope, sleep } from '@temporalio/workflow';
import type { CommandHost, CommandSpec, NoticeTarget } from '../shared/task.js';

export /** The run's foreground or background standing, which a move to the background changes. */
interface Standing {
  background: boolean;
  notice: NoticeTarget | undefined;
  /** Whether a move to the background may still come: a foreground run not yet moved, stopped or ended. */
  movable: boolean;
  /** Cancels the foreground timer that runs now. */
  cancelTimeout?: () => void;
  /** Lets go of the foreground attempt that runs now (the command keeps running), for one without a deadline. */
  release?: () => void;
  /** The command's host, once chosen: where writes to its stdin go. */
  host?: CommandHost;
  /** The run has its outcome (the command ended, or it never will run). */
  ended: boolean;
  /** The host said a monitor's notice workflow exists: the completion notice goes there. */
  noticeChannel?: boolean;
  /** The foreground deadline its host enforces (`CommandSpec.deadlineAtMs`), by the server's clock: a move after it is refused. */
  deadlineAtMs?: number;
}

/**
 * The foreground timeout: a workflow timer, so it holds even while no worker runs the command. A
 * move to the background cancels it; once it fired, the run can no longer move.
 */
export function startTimeout(spec: CommandSpec, onFire: () => void, standing: Standing) {
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
 * The foreground timeout when the host enforces it: the run's deadline, set on the spec for its
 * attempts. No timer fires here; a run past it ends with the outcome its host reports (timed out, or
 * never started), and refuses a move from then on. Cancelled by a move, as a timer would be.
 */
export function deadlineOnHost(spec: CommandSpec, standing: Standing) {
  const deadlineAtMs = spec.timeoutMs === undefined ? undefined : Date.now() + spec.timeoutMs;
  standing.deadlineAtMs = deadlineAtMs;
  const cancel = () => {
    standing.deadlineAtMs = undefined;
  };
  standing.cancelTimeout = cancel;
  return {
    spec: deadlineAtMs === undefined ? spec : { ...spec, deadlineAtMs },
    timeout: { firedAfterMs: (): number | undefined => undefined, cancel },
  };
}
