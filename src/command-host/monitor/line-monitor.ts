/**
 * A task's monitor while an attempt follows its command: scans each new line of its spill files
 * against the pattern, gathers matches for MONITOR_GATHER_MS, and sends them as one batch through
 * the host's sink. A line that matches nothing costs the server nothing: the scan is the host's
 * own work (an inotify watch, backed by a slow poll, and one read of each new byte). What was sent
 * is written to the task's monitor record after the sink took it (shared/monitor.ts has the path).
 */
import fs from 'node:fs/promises';
import stripAnsi from 'strip-ansi';
import {
  MONITOR_FLOOD_LINES,
  MONITOR_FLOOD_WINDOW_MS,
  MONITOR_GATHER_MS,
  MONITOR_LINE_SCAN_BYTES,
  MONITOR_NOTICE_LINES,
} from '../../shared/limits.js';
import type { MonitorBatch, MonitorLine, MonitorTarget } from '../../shared/monitor.js';
import { compileMonitorPattern, type LineMatcher } from '../../shared/monitor-pattern.js';
import type { CommandSpec } from '../../shared/task.js';
import { SpillWatch } from '../spill/spill-watch.js';
import type { TaskFiles } from '../supervisor/task-files.js';
import { type MonitorRecord, readMonitorRecord, writeMonitorRecord } from './monitor-record.js';

/** Where a host's monitors send their batches (worker/monitor-sink.ts: a signal-with-start). */
export interface MonitorSink {
  send(taskId: string, target: MonitorTarget, batch: MonitorBatch): Promise<void>;
}

/** How often a monitor looks at its files when no inotify event woke it (a host out of watches). */
const MONITOR_POLL_MS = 2_000;

/** The most bytes of one stream a scan reads in one go: a fast writer is scanned in rounds. */
const SCAN_CHUNK_BYTES = 1024 * 1024;

/** The first wait after a send failed (the server unreachable), doubled after each failure... */
const SEND_RETRY_FIRST_MS = 500;
/** ...up to this: a server back from a restart hears from the monitor within seconds. */
const SEND_RETRY_MAX_MS = 15_000;

/** How often the scan position is written while nothing is sent: a crash then rescans little. */
const POSITION_SAVE_INTERVAL_MS = 30_000;

type Stream = 'stdout' | 'stderr';
const STREAMS: readonly Stream[] = ['stdout', 'stderr'];

/** What the monitor of one task needs of its task. */
export interface MonitoredTask {
  taskId: string;
  files: TaskFiles;
  target: MonitorTarget;
  /** A terminal task: lines of its log, with control sequences removed. */
  terminal: boolean;
  /** The pattern the task started with (`notify_on`), used when no record exists yet. */
  notifyOn?: string;
}

export class LineMonitor {
  private matcher: LineMatcher | undefined;
  /** Each stream's offset of the first byte not yet scanned (a line's start). */
  private readonly scanAt: { stdout: number; stderr: number };
  /** A stream whose last line was longer than MONITOR_LINE_SCAN_BYTES: skip to its end. */
  private readonly skipping = { stdout: false, stderr: false };
  /** Where a line longer than MONITOR_LINE_SCAN_BYTES began, while the scan skips its rest. */
  private readonly skipFrom = { stdout: 0, stderr: 0 };
  private pending: { lines: MonitorLine[]; more: number; sinceMs: number; pausedAfter?: number } | undefined;
  /**
   * A batch whose send was tried: sent again exactly as it was until the server takes it (the
   * notice workflow drops it when the first try landed after all), with the scan position it
   * covers. New matches gather in `pending` meanwhile.
   */
  private outbox: { batch: MonitorBatch; upTo: { stdout: number; stderr: number } } | undefined;
  /** Times of recent matches, for the flood bound. */
  private recentMatches: number[] = [];
  private stopped = false;
  private wake: (() => void) | undefined;
  private savedAtMs = Date.now();
  /** One step at a time: a scan, a send, a change of pattern. */
  private turn: Promise<unknown> = Promise.resolve();
  private loop: Promise<void> | undefined;

  private constructor(
    private readonly task: MonitoredTask,
    private readonly sink: MonitorSink,
    private record: MonitorRecord,
  ) {
    this.scanAt = { ...record.sentUpTo };
    this.matcher = matcherOf(record);
  }

  /**
   * The monitor of the task `spec` runs, when it is a background task whose spec names where its
   * notices go and the host has a sink; undefined otherwise.
   */
  static async ofTask(
    sink: MonitorSink | undefined,
    spec: CommandSpec,
    files: TaskFiles,
  ): Promise<LineMonitor | undefined> {
    if (sink === undefined || !spec.background || spec.monitor === undefined) return undefined;
    const { notifyOn, ...target } = spec.monitor;
    return LineMonitor.open(
      {
        taskId: spec.taskId,
        files,
        target,
        terminal: spec.terminal !== undefined,
        ...(notifyOn !== undefined ? { notifyOn } : {}),
      },
      sink,
    );
  }

  /** The task's monitor, from its record (or, the first time, from `notify_on`). */
  static async open(task: MonitoredTask, sink: MonitorSink): Promise<LineMonitor> {
    let record = await readMonitorRecord(task.files);
    if (record === undefined) {
      record = {
        pattern: task.notifyOn ?? null,
        paused: false,
        sentUpTo: { stdout: 0, stderr: 0 },
        channel: false,
      };
      if (task.notifyOn !== undefined) await writeMonitorRecord(task.files, record);
    }
    return new LineMonitor(task, sink, record);
  }

  /** Follows the files until `finish` or `stop`. */
  start(): void {
    this.loop ??= this.follow();
  }

  /** Whether the task's notice workflow exists: its completion notice must go there, after the batches. */
  get channel(): boolean {
    return this.record.channel;
  }

  /**
   * Sets (or, with null, clears) the pattern. The lines the old pattern was matching are matched
   * by it and sent first; the new one matches the lines after them. Lines printed while there was
   * no pattern (or it paused) are skipped, to the start of the line being written.
   */
  set(pattern: string | null): Promise<void> {
    return this.inTurn(async () => {
      if (this.matcher === undefined) {
        for (const stream of STREAMS) {
          this.scanAt[stream] = await lineStartBefore(this.task.files[stream], this.scanAt[stream]);
          this.skipping[stream] = false;
        }
      } else {
        await this.scan(false);
      }
      await this.flush();
      this.recentMatches = [];
      this.record = { ...this.record, pattern, paused: false, channel: true };
      this.matcher = matcherOf(this.record);
      await this.save();
      this.wake?.();
    });
  }

  /**
   * The command ended: scans to the end of its output (its last line too, unterminated), sends
   * what matched, and stops. Throws when the batch could not be sent: the attempt fails, and the
   * next one scans again from the record.
   */
  async finish(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop?.catch(() => undefined);
    await this.inTurn(async () => {
      await this.scan(true);
      await this.flush();
      await this.save();
    });
  }

  /** Stops following without sending (the attempt let go of the command; the next one goes on). */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private inTurn<T>(step: () => Promise<T>): Promise<T> {
    const next = this.turn.then(step);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async follow(): Promise<void> {
    const watch = new SpillWatch(this.task.files.stdout, this.task.files.stderr);
    let retryMs = SEND_RETRY_FIRST_MS;
    try {
      while (!this.stopped) {
        let waitMs = MONITOR_POLL_MS;
        try {
          await this.inTurn(async () => {
            await this.scan(false);
            const due =
              this.pending !== undefined &&
              (this.pending.pausedAfter !== undefined ||
                Date.now() - this.pending.sinceMs >= MONITOR_GATHER_MS);
            if (due || this.outbox !== undefined) await this.flush();
            if (Date.now() - this.savedAtMs >= POSITION_SAVE_INTERVAL_MS) await this.save();
          });
          retryMs = SEND_RETRY_FIRST_MS;
          if (this.pending) waitMs = Math.max(1, this.pending.sinceMs + MONITOR_GATHER_MS - Date.now());
        } catch {
          // The server did not take the batch: keep it (and gather on) until a send succeeds.
          waitMs = retryMs;
          retryMs = Math.min(SEND_RETRY_MAX_MS, retryMs * 2);
        }
        if (this.stopped) break;
        if (this.matcher === undefined && this.pending === undefined && this.outbox === undefined) {
          // Nothing to match: sleep until the pattern is set again.
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
          this.wake = undefined;
          continue;
        }
        await Promise.race([
          watch.next(waitMs),
          new Promise<void>((resolve) => {
            this.wake = resolve;
          }),
        ]);
        this.wake = undefined;
      }
    } finally {
      watch.close();
    }
  }

  /** Matches the lines written since the last scan; `toEnd` takes a last line with no newline too. */
  private async scan(toEnd: boolean): Promise<void> {
    if (this.matcher === undefined) return;
    for (const stream of this.task.terminal ? (['stdout'] as const) : STREAMS) {
      for (;;) {
        const chunk = await readFrom(this.task.files[stream], this.scanAt[stream], SCAN_CHUNK_BYTES);
        if (chunk.length === 0) break;
        // Only at the end of the file is an unterminated last line a line (the command ended).
        const atEnd = chunk.length < SCAN_CHUNK_BYTES;
        const consumed = this.scanChunk(stream, chunk, toEnd && atEnd);
        this.scanAt[stream] += consumed;
        if (this.matcher === undefined || consumed === 0 || atEnd) break;
      }
    }
  }

  /** Scans the lines in `chunk` (which starts at a line's start); returns the bytes consumed. */
  private scanChunk(stream: Stream, chunk: Buffer, toEnd: boolean): number {
    let start = 0;
    while (start < chunk.length && this.matcher !== undefined) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline < 0) {
        const rest = chunk.length - start;
        // An unfinished line waits for its end, unless it is already longer than what is matched.
        if (!toEnd && rest <= MONITOR_LINE_SCAN_BYTES && !this.skipping[stream]) return start;
        if (!this.skipping[stream]) {
          this.skipFrom[stream] = this.scanAt[stream] + start;
          this.match(stream, this.skipFrom[stream], chunk.subarray(start, start + MONITOR_LINE_SCAN_BYTES));
        }
        this.skipping[stream] = !toEnd;
        return chunk.length;
      }
      if (this.skipping[stream]) {
        this.skipping[stream] = false;
      } else {
        const end = Math.min(newline, start + MONITOR_LINE_SCAN_BYTES);
        this.match(stream, this.scanAt[stream] + start, chunk.subarray(start, end));
      }
      start = newline + 1;
    }
    return start;
  }

  private match(stream: Stream, offset: number, bytes: Buffer): void {
    const matcher = this.matcher;
    if (matcher === undefined) return;
    let text = bytes.toString('utf8');
    if (this.task.terminal) text = stripAnsi(text).replaceAll('\r', '');
    else if (text.endsWith('\r')) text = text.slice(0, -1);
    if (!matcher(text)) return;
    const now = Date.now();
    this.pending ??= { lines: [], more: 0, sinceMs: now };
    if (this.pending.lines.length < MONITOR_NOTICE_LINES) this.pending.lines.push({ stream, offset, text });
    else this.pending.more++;
    this.recentMatches.push(now);
    while ((this.recentMatches[0] ?? now) < now - MONITOR_FLOOD_WINDOW_MS) this.recentMatches.shift();
    if (this.recentMatches.length > MONITOR_FLOOD_LINES) {
      // Too many: this batch says the monitor paused, and nothing more is matched until it is set again.
      this.pending.pausedAfter = MONITOR_FLOOD_LINES;
      this.record = { ...this.record, paused: true };
      this.matcher = undefined;
    }
  }

  /**
   * Sends the batch tried before, if any, then the gathered one (frozen first, so a retry sends it
   * exactly as it was), and records how far the scan got with every match before it sent. Nothing
   * gathered stays behind: `finish` flushes once, and its lines are the last the task has.
   */
  private async flush(): Promise<void> {
    const sentSome = this.outbox !== undefined || this.pending !== undefined;
    for (;;) {
      if (this.outbox === undefined && this.pending !== undefined) {
        const { lines, more, pausedAfter } = this.pending;
        this.outbox = {
          batch: {
            pattern: this.record.pattern ?? '',
            lines: inStreamOrder(lines),
            more,
            ...(pausedAfter !== undefined ? { pausedAfter } : {}),
          },
          upTo: this.scanPosition(),
        };
        this.pending = undefined;
      }
      if (this.outbox === undefined) break;
      await this.sink.send(this.task.taskId, this.task.target, this.outbox.batch);
      this.record = { ...this.record, sentUpTo: this.outbox.upTo, channel: true };
      this.outbox = undefined;
      // Matches gathered while a batch waited to go again follow it, in a batch of their own.
    }
    if (sentSome || this.record.paused) await this.save();
  }

  /** The scan's position as a record keeps it: a line being skipped counts from its start. */
  private scanPosition(): { stdout: number; stderr: number } {
    return {
      stdout: this.skipping.stdout ? this.skipFrom.stdout : this.scanAt.stdout,
      stderr: this.skipping.stderr ? this.skipFrom.stderr : this.scanAt.stderr,
    };
  }

  /** Writes the record; with nothing unsent, the scan's position is how far matches were sent. */
  private async save(): Promise<void> {
    if (this.outbox === undefined && this.pending === undefined)
      this.record = { ...this.record, sentUpTo: this.scanPosition() };
    this.savedAtMs = Date.now();
    await writeMonitorRecord(this.task.files, this.record);
  }
}

function matcherOf(record: MonitorRecord): LineMatcher | undefined {
  if (record.pattern === null || record.paused) return undefined;
  try {
    return compileMonitorPattern(record.pattern);
  } catch {
    return undefined; // The tool checked it; a record edited by hand matches nothing.
  }
}

/**
 * Where the line being written at the end of `file` starts (its size when the file ends with a
 * newline), looking back at most MONITOR_LINE_SCAN_BYTES; never before `from`.
 */
export async function lineStartBefore(file: string, from: number): Promise<number> {
  const size = (await sizeOf(file)) ?? 0;
  if (size <= from) return from;
  const lookBack = Math.max(from, size - MONITOR_LINE_SCAN_BYTES);
  const tail = await readFrom(file, lookBack, size - lookBack);
  const newline = tail.lastIndexOf(0x0a);
  // No newline in the look-back: a long line, matched from where the look-back starts.
  return newline < 0 ? lookBack : lookBack + newline + 1;
}

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return undefined;
  }
}

async function readFrom(file: string, offset: number, maxBytes: number): Promise<Buffer> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * A batch's lines with stdout's first, then stderr's, each in the order printed. The supervisor
 * relays the two streams through pipes of their own, so the order the scan found them in across
 * streams says nothing about the order the command printed them; this order is the same each time.
 */
function inStreamOrder(lines: MonitorLine[]): MonitorLine[] {
  return [...lines].sort(
    (a, b) => STREAMS.indexOf(a.stream) - STREAMS.indexOf(b.stream) || a.offset - b.offset,
  );
}
