import type fs from 'node:fs/promises';
import type { Context } from '@temporalio/activity';
import {
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_TAIL_BYTES,
  IDLE_HEARTBEAT_INTERVAL_MS,
  SPILL_SWEEP_INTERVAL_MS,
} from '../shared/limits.js';
import type { CommandProgress } from '../shared/task.js';
import { streamTail } from './spill-files.js';

type Streams<T> = { stdout: T; stderr: T };

export interface ProgressSource {
  pid: number;
  startedAtMs: number;
  host: string;
  /** The spill files' paths, as progress names them. */
  files: Streams<string>;
  /** Read handles on the spill files: they keep working if a file is unlinked. */
  readers: Streams<fs.FileHandle>;
  /** The spill retention; live files are touched well within it so no sweeper takes them. */
  spillRetentionMs: number;
}

/**
 * Heartbeats a running command's progress: within HEARTBEAT_INTERVAL_MS of its output growing
 * (checked by size alone), else the same details every IDLE_HEARTBEAT_INTERVAL_MS, also when the
 * files cannot be read. An idle task then costs two fstats a tick and a small heartbeat now and
 * then; the idle heartbeats carry a kill (cancellation arrives only in a heartbeat's response).
 * The spill files are touched now and then, so a sweeper (of any worker sharing the directory)
 * sees them as live however long the command stays silent.
 */
export async function startProgressHeartbeats(context: Context, source: ProgressSource): Promise<() => void> {
  const read = async (): Promise<CommandProgress> => {
    const [stdout, stderr] = await Promise.all([
      streamTail(source.readers.stdout, source.files.stdout, HEARTBEAT_TAIL_BYTES, true),
      streamTail(source.readers.stderr, source.files.stderr, HEARTBEAT_TAIL_BYTES, true),
    ]);
    return { pid: source.pid, startedAtMs: source.startedAtMs, host: source.host, stdout, stderr };
  };
  let last = await read();
  let sentAtMs = Date.now();
  let touchedAtMs = Date.now();
  const touchIntervalMs = Math.min(SPILL_SWEEP_INTERVAL_MS, source.spillRetentionMs / 4);
  context.heartbeat(last);

  const refresh = async (): Promise<boolean> => {
    const [stdout, stderr] = await Promise.all([source.readers.stdout.stat(), source.readers.stderr.stat()]);
    if (stdout.size === last.stdout.bytes && stderr.size === last.stderr.bytes) return false;
    last = await read();
    return true;
  };
  const touch = async () => {
    const now = new Date();
    await Promise.all([source.readers.stdout.utimes(now, now), source.readers.stderr.utimes(now, now)]);
  };

  let ticking = false;
  const tick = async () => {
    // A failed read is retried next tick; the idle heartbeat goes out regardless.
    const grew = await refresh().catch(() => false);
    if (grew || Date.now() - sentAtMs >= IDLE_HEARTBEAT_INTERVAL_MS) {
      sentAtMs = Date.now();
      context.heartbeat(last);
    }
    if (Date.now() - touchedAtMs >= touchIntervalMs) {
      touchedAtMs = Date.now();
      await touch().catch(() => undefined);
    }
  };
  const timer = setInterval(() => {
    if (ticking) return; // A slow disk: let the previous tick finish.
    ticking = true;
    tick()
      .catch(() => undefined) // Nothing in a tick may take the worker down.
      .finally(() => {
        ticking = false;
      });
  }, HEARTBEAT_INTERVAL_MS);
  return () => clearInterval(timer);
}
