import { setTimeout as sleep } from 'node:timers/promises';
import { WAIT_POLL_INTERVAL_MS } from '../shared/limits.js';
import type { ReadPosition } from '../shared/read-position.js';
import { readableUpTo } from './output-reads.js';
import type { TaskSnapshot } from './task-snapshot.js';

/** Why a wait for output ended. */
export type WaitOutcome = 'output' | 'ended' | 'timeout' | 'aborted';

export interface WaitOptions {
  /** The longest the wait may take. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** @default WAIT_POLL_INTERVAL_MS */
  intervalMs?: number;
  /** Only whole lines count as new output (a filtered read leaves an unfinished one for later). */
  wholeLines?: boolean;
}

/**
 * Waits, by asking the server every `intervalMs`, until a task holds output past its read position
 * or has ended, `timeoutMs` has passed, or `signal` aborts. Needs no worker: both the task's
 * progress and the read position are what the server holds. The position is taken once; a read by
 * someone else meanwhile can only end the wait early.
 */
export async function waitForNewOutput(
  snapshot: () => Promise<TaskSnapshot>,
  position: () => Promise<ReadPosition>,
  options: WaitOptions,
): Promise<WaitOutcome> {
  const { signal } = options;
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? WAIT_POLL_INTERVAL_MS;
  let from: ReadPosition | undefined;
  for (;;) {
    if (signal?.aborted) return 'aborted';
    const now = await snapshot();
    if (now.final) return 'ended';
    from ??= await position();
    const upTo = readableUpTo(now, options.wholeLines === true);
    if (upTo.stdout > from.stdout || upTo.stderr > from.stderr) return 'output';
    const left = deadline - Date.now();
    if (left <= 0) return 'timeout';
    const slept = await sleep(Math.min(intervalMs, left), true, signal ? { signal } : {}).catch(() => false);
    if (!slept) return 'aborted';
  }
}
