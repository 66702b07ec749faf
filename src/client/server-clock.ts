import type { Client, WorkflowUpdateFailedError } from '@temporalio/client';

/**
 * How far each server's clock is ahead of this host's, as its workflows last told us. Expiries a
 * workflow checks (read claims, stdin writes) are set on the server's clock: this host's may be off.
 */
const serverClockOffsetMs = new WeakMap<Client, number>();

/** Now on the server's clock, as far as this host has learnt it. */
export function serverNow(client: Client): number {
  return Date.now() + (serverClockOffsetMs.get(client) ?? 0);
}

/** Learns the server's clock from a time a workflow reported as its own now. */
export function learnServerTime(client: Client, serverTimeMs: number): void {
  serverClockOffsetMs.set(client, serverTimeMs - Date.now());
}

/**
 * The workflow time a refusal for the caller's clock reports (its message is `prefix` then the
 * time), or undefined for any other refusal.
 */
export function refusedAtServerTime(err: WorkflowUpdateFailedError, prefix: string): number | undefined {
  const message = err.cause instanceof Error ? err.cause.message : '';
  if (!message.startsWith(prefix)) return undefined;
  const time = Number(message.slice(prefix.length));
  return Number.isFinite(time) ? time : undefined;
}
