import { setTimeout as sleep } from 'node:timers/promises';
import { WAIT_POLL_INTERVAL_MS } from '../shared/limits.js';
import type { ReadPosition } from '../shared/read-position.js';
import { tailBytes } from '../shared/stream-text.js';
import { readableUpTo, sliceStream } from './output-slices.js';
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
  /**
   * Only new text this says yes to ends the wait (a filtered read: a line that matches). New text
   * the snapshot does not hold all of (past its tail) ends it as well: it cannot be looked at.
   */
  wanted?: (text: string) => boolean;
}

/**
 * Waits, by asking the server every `intervalMs`, until a task holds output past its read position
 * (output `wanted` wants, when given) or has ended, `timeoutMs` has passed, or `signal` aborts.
 * Needs no worker: both the task's progress and the read position are what the server holds. The
 * position is taken once; a read by someone else meanwhile can only end the wait early.
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
    const tails = { stdout: tailBytes(now.stdout), stderr: tailBytes(now.stderr) };
    const upTo = readableUpTo(now, options.wholeLines === true, tails);
    if (upTo.stdout > from.stdout || upTo.stderr > from.stderr) {
      if (options.wanted === undefined || hasWanted(now, tails, from, upTo, options.wanted)) return 'output';
      // Nothing wanted in it: looked at once, then waited past (the read still counts it).
      from = { stdout: Math.max(from.stdout, upTo.stdout), stderr: Math.max(from.stderr, upTo.stderr) };
    }
    const left = deadline - Date.now();
    if (left <= 0) return 'timeout';
    const slept = await sleep(Math.min(intervalMs, left), true, signal ? { signal } : {}).catch(() => false);
    if (!slept) return 'aborted';
  }
}

/** Whether the new text of either stream, `[from, upTo)`, is wanted, or is not all held (so cannot be looked at). */
function hasWanted(
  snapshot: TaskSnapshot,
  tails: { stdout: Buffer; stderr: Buffer },
  from: ReadPosition,
  upTo: ReadPosition,
  wanted: (text: string) => boolean,
): boolean {
  return (['stdout', 'stderr'] as const).some((stream) => {
    if (upTo[stream] <= from[stream]) return false;
    const read = sliceStream(snapshot[stream], tails[stream], from[stream], upTo[stream]);
    return read.droppedBytes > 0 || wanted(read.text);
  });
}
