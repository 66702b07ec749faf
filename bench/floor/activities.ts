/** The floors' activities; they run in the bench process, so the bench counts their starts. */
import { Context } from '@temporalio/activity';

/** The floor's cadence: a hand-written long activity heartbeating once a minute (durable-bash's is HEARTBEAT_INTERVAL_MS). */
export const FLOOR_HEARTBEAT_MS = 60_000;

/** Called with the time (performance.now()) each heartbeating activity started. */
let onStarted: (atMs: number) => void = () => {};

export function onHeartbeatingStarted(listener: (atMs: number) => void): void {
  onStarted = listener;
}

export async function trivial(): Promise<void> {}

/** Heartbeats at once, then once a minute, until cancelled (or its worker shuts down). */
export async function heartbeatUntilCancelled(): Promise<void> {
  const context = Context.current();
  context.heartbeat();
  onStarted(performance.now());
  const timer = setInterval(() => context.heartbeat(), FLOOR_HEARTBEAT_MS);
  try {
    await context.cancelled;
  } finally {
    clearInterval(timer);
  }
}
