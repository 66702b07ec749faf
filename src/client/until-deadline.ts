/**
 * A client call bounded by a deadline (and a caller's abort signal) that settles then even if the
 * call does not: the SDK's update-with-start, for one, keeps waiting for an update no worker
 * accepts, whatever its signal says.
 */

/** Why `untilDeadline` gave up: its deadline passed. */
export class DeadlinePassed extends Error {
  constructor() {
    super('no answer in time');
  }
}

/**
 * Runs `work` with a signal that aborts at `deadline` (rejecting with `DeadlinePassed`) or with
 * `signal` (rejecting with its reason), and settles then even if `work` does not. (A timer of its
 * own, not `AbortSignal.timeout` under `AbortSignal.any`: Node may collect those before they fire.)
 */
export function untilDeadline<T>(
  deadline: number,
  signal: AbortSignal | undefined,
  work: (stop: AbortSignal) => Promise<T>,
): Promise<T> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(new DeadlinePassed()), Math.max(1, deadline - Date.now()));
  const onAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const stopped = new Promise<never>((_, reject) => {
    if (stop.signal.aborted) reject(stop.signal.reason);
    stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true });
  });
  return Promise.race([work(stop.signal), stopped]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  });
}
