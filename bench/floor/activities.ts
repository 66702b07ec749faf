/** The floors' activities; they run in the bench process, so the bench counts their starts. */
import { spawn } from 'node:child_process';
import { Context } from '@temporalio/activity';

/** The floor's cadence: a hand-written long activity heartbeating once a minute (durable-bash's is HEARTBEAT_INTERVAL_MS). */
export const FLOOR_HEARTBEAT_MS = 60_000;

/** Called with the time (performance.now()) each heartbeating activity started. */
let onStarted: (atMs: number) => void = () => {};

export function onHeartbeatingStarted(listener: (atMs: number) => void): void {
  onStarted = listener;
}

export async function trivial(): Promise<void> {}

/** The guarded floor's local activity: a small spec, as a run's resolution returns. */
export async function resolveTrivially(): Promise<{ hostQueue: string; timeoutMs: number }> {
  return { hostQueue: 'floor-host', timeoutMs: 120_000 };
}

/** The guarded floor's activity: one heartbeat with the spec, then done. */
export async function heartbeatOnce(spec: { hostQueue: string }): Promise<void> {
  Context.current().heartbeat(spec);
}

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

/**
 * Starts `bash -c command` (as a plain Node.js activity would), heartbeats once it runs and then once
 * a minute, and kills it when cancelled: what running a command costs with nothing of durable-bash.
 */
export async function spawnUntilCancelled(command: string): Promise<void> {
  const context = Context.current();
  const child = spawn('bash', ['-c', command], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  context.heartbeat();
  onStarted(performance.now());
  const timer = setInterval(() => context.heartbeat(), FLOOR_HEARTBEAT_MS);
  try {
    await Promise.race([context.cancelled, exited]);
  } finally {
    clearInterval(timer);
    child.kill('SIGKILL');
  }
}
