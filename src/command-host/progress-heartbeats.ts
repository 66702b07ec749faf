/** A running command's heartbeats: liveness at a fixed cadence, carrying its pid, byte counts and bounded tails. */
import type fs from 'node:fs/promises';
import type { Context } from '@temporalio/activity';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TAIL_BYTES, SPILL_SWEEP_INTERVAL_MS } from '../shared/limits.js';
import type { CommandProgress } from '../shared/task.js';
import { streamTail } from './spill/spill-files.js';

/** Timers fire a little early or late: a tick this close to its heartbeat's time sends it. */
const TICK_SLACK_MS = 50;

type Streams<T> = { stdout: T; stderr: T };

export interface ProgressSource {
  pid: number;
  startedAtMs: number;
  host: string;
  /** The host's own task queue (readers find it here). */
  hostQueue: string;
  /** The spill files' paths, as progress names them. */
  files: Streams<string>;
  /** Read handles on the spill files: they keep working if a file is unlinked. */
  readers: Streams<fs.FileHandle>;
  /** The spill retention; live files are touched well within it so no sweeper takes them. */
  spillRetentionMs: number;
}

/** A command's progress as it stands now: its byte counts and bounded tails, read from its spill files. */
export function readProgress(
  source: Pick<ProgressSource, 'pid' | 'startedAtMs' | 'host' | 'hostQueue' | 'files' | 'readers'>,
): CommandProgress {
  const stdout = streamTail(source.readers.stdout, source.files.stdout, HEARTBEAT_TAIL_BYTES, true);
  const stderr = streamTail(source.readers.stderr, source.files.stderr, HEARTBEAT_TAIL_BYTES, true);
  return {
    pid: source.pid,
    startedAtMs: source.startedAtMs,
    host: source.host,
    hostQueue: source.hostQueue,
    stdout,
    stderr,
  };
}

/** `readProgress`, or undefined when the files cannot be read: for an attempt's end, which goes on without it. */
export function readProgressIfAny(source: Parameters<typeof readProgress>[0]): CommandProgress | undefined {
  try {
    return readProgress(source);
  } catch {
    return undefined;
  }
}

/**
 * Heartbeats a running command's progress: once at attach (the record that the command started,
 * which keeps a retry from starting it again), then every `intervalMs` with the byte counts and
 * bounded tails as they stand then. At HEARTBEAT_INTERVAL_MS an idle task costs the server half a
 * heartbeat a minute, and a chatty or often-read one no more: readers get output from the host
 * itself (`readOutput`), and the heartbeats only keep what a read shows while the host does not
 * answer and what a lost task ends with, up to one interval old. The spill files are touched now
 * and then, so a sweeper (of any worker sharing the directory) sees them as live however long the
 * command stays silent.
 */
export async function startProgressHeartbeats(
  context: Context,
  source: ProgressSource,
  intervalMs: number = HEARTBEAT_INTERVAL_MS,
): Promise<ProgressHeartbeats> {
  const read = () => readProgress(source);
  let last = read();
  context.heartbeat(last);
  let sentAtMs = Date.now();
  const touchIntervalMs = Math.min(SPILL_SWEEP_INTERVAL_MS, source.spillRetentionMs / 4);
  let touchedAtMs = Date.now();

  /** The details again, read afresh only when a stream's size changed (two fstats otherwise). */
  const refresh = async (): Promise<void> => {
    const [stdout, stderr] = await Promise.all([source.readers.stdout.stat(), source.readers.stderr.stat()]);
    if (stdout.size !== last.stdout.bytes || stderr.size !== last.stderr.bytes) last = read();
  };
  const touch = async () => {
    const now = new Date();
    await Promise.all([source.readers.stdout.utimes(now, now), source.readers.stderr.utimes(now, now)]);
  };

  let ticking = false;
  const tick = async () => {
    if (Date.now() - sentAtMs >= intervalMs - TICK_SLACK_MS) {
      // A failed read keeps the last details; the heartbeat goes out regardless (it is the liveness).
      await refresh().catch(() => undefined);
      sentAtMs = Date.now();
      context.heartbeat(last);
    }
    if (Date.now() - touchedAtMs >= touchIntervalMs) {
      touchedAtMs = Date.now();
      await touch().catch(() => undefined);
    }
  };
  const timer = setInterval(
    () => {
      if (ticking) return; // A slow disk: let the previous tick finish.
      ticking = true;
      tick()
        .catch(() => undefined) // Nothing in a tick may take the worker down.
        .finally(() => {
          ticking = false;
        });
    },
    Math.min(intervalMs, touchIntervalMs),
  );
  return {
    stop: () => clearInterval(timer),
  };
}

/** A running command's heartbeats. */
export interface ProgressHeartbeats {
  stop(): void;
}
