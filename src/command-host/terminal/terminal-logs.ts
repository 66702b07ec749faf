/**
 * The screens of this host's terminal tasks, rendered from their logs (terminal-screen.ts) for
 * reads, writes and ends. Each task's emulator is kept in memory while it is in use, so a read
 * feeds only what is new, and saved every 64 KiB of log as a checkpoint file beside its spill
 * files (`<task id>.screen`), from which a restarted worker goes on to the same screen. One task's
 * renders run one at a time.
 */
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { TerminalEnd } from '../../shared/task.js';
import type { TerminalScreen, TerminalSize } from '../../shared/terminal.js';
import { readRange, writeAtomically } from '../spill/spill-files.js';
import type { TaskFiles } from '../supervisor/task-files.js';
import {
  checkpointCut,
  parseTerminalSizes,
  type TerminalCheckpoint,
  TerminalEmulator,
} from './terminal-screen.js';

/** Bytes of the log fed to an emulator at a time, so a long log never sits in memory whole. */
const FEED_CHUNK_BYTES = 1 << 20;

/** An emulator left unused this long is let go (its checkpoint stays on disk). */
const IDLE_MS = 60_000;

/** Log bytes fed between checkpoints: a restarted worker feeds at most this much again. */
const CHECKPOINT_EVERY_BYTES = 64 * 1024;

/** Scroll counts kept per task for reads of what scrolled off: where each recent read ended. */
const MARKS_KEPT = 32;

/** A render of a terminal task's log up to some byte. */
export interface TerminalRender {
  screen: TerminalScreen;
  /** The bytes of the log the screen shows (all of it, when it was rendered). */
  fed: number;
  /** With `scrolledFrom`: the lines that scrolled off between that byte of the log and `fed`. */
  scrolledOff?: { lines: string[]; missing: number };
}

interface Held {
  emulator: TerminalEmulator;
  /** `[log offset, lines scrolled off by then]` at recent reads' ends, oldest first. */
  marks: Array<[number, number]>;
  /** The byte the checkpoint file is at. */
  saved: number;
  /** The emulator is not inside an escape sequence or a character: a checkpoint of it restores. */
  safe: boolean;
  idle?: NodeJS.Timeout;
}

/** A task's emulator as the map holds it: loading, and the work queued on it. */
interface Entry {
  ready: Promise<Held>;
  turn: Promise<unknown>;
}

export class TerminalLogs {
  private readonly held = new Map<string, Entry>();

  /** Whether the task runs on a terminal: its supervisor records the terminal's sizes. */
  static isTerminal(files: TaskFiles): boolean {
    // Synchronous: a stat takes microseconds, where an asynchronous one waited for the thread pool.
    try {
      return statSync(files.ttyEvents, { throwIfNoEntry: false }) !== undefined;
    } catch {
      return false;
    }
  }

  /**
   * The screen after the whole log as it stands. A read (`read`) also records how many lines had
   * scrolled off by the end of the log it showed, in `<task id>.screen-marks`, and with
   * `scrolledFrom` (its read position in the log) gets the lines that scrolled off since, at most
   * `limitChars` of them (the newest; the rest counted as missing).
   */
  render(
    files: TaskFiles,
    options: { read?: boolean; scrolledFrom?: number; limitChars?: number } = {},
  ): Promise<TerminalRender> {
    return this.withEmulator(files, async (held) => {
      const size = await this.feedAll(files, held);
      const { emulator } = held;
      const render: TerminalRender = { screen: emulator.screen(), fed: size };
      if (options.scrolledFrom !== undefined) {
        const scrolled = emulator.scrolledOff(scrolledAt(held.marks, options.scrolledFrom));
        render.scrolledOff = newestWithin(scrolled.lines, scrolled.missing, options.limitChars);
      }
      if (options.read) {
        const marks = [
          ...held.marks.filter(([at]) => at < size),
          [size, emulator.scrolled] as [number, number],
        ];
        held.marks = marks.slice(-MARKS_KEPT);
        await writeAtomically(files.screenMarks, JSON.stringify(held.marks));
      }
      // A checkpoint costs a serialization of the screen and scrollback: saved once the log has
      // grown a while past the last one, so a read costs what is new (a restart re-feeds the rest).
      if (size - held.saved >= CHECKPOINT_EVERY_BYTES) await this.save(files, held);
      return render;
    });
  }

  /** Whether the program last set application cursor keys (DECCKM), as the screen now stands. */
  async applicationCursor(files: TaskFiles): Promise<boolean> {
    return (await this.render(files)).screen.applicationCursor;
  }

  /** The ended task's last screen and what scrolled off it (at most `limitChars` of it, the newest). */
  end(files: TaskFiles, limitChars: number): Promise<TerminalEnd> {
    return this.withEmulator(files, async (held) => {
      await this.feedAll(files, held);
      const scrolled = held.emulator.scrolledOff(0);
      const { lines, missing } = newestWithin(scrolled.lines, scrolled.missing, limitChars);
      const text = lines.join('\n');
      const dropped = missing;
      await this.save(files, held);
      return { screen: held.emulator.screen(), scrolledOff: text, scrolledOffDropped: dropped };
    });
  }

  /** Lets go of a task's emulator (its command ended, or its worker is done with it). */
  forget(taskId: string): void {
    const entry = this.held.get(taskId);
    if (entry === undefined) return;
    this.held.delete(taskId);
    void entry.turn.then(async () => {
      const held = await entry.ready.catch(() => undefined);
      if (held === undefined) return;
      clearTimeout(held.idle);
      held.emulator.dispose();
    });
  }

  /**
   * Runs `work` on the task's emulator after the work queued before it: one emulator per task,
   * loaded once (the entry is in the map before anything awaits), fed by one render at a time.
   */
  private withEmulator<T>(files: TaskFiles, work: (held: Held) => Promise<T>): Promise<T> {
    const { taskId } = files;
    let entry = this.held.get(taskId);
    if (entry === undefined) {
      entry = { ready: load(files), turn: Promise.resolve() };
      this.held.set(taskId, entry);
    }
    const current = entry;
    const run = current.turn.then(async () => {
      const held = await current.ready;
      clearTimeout(held.idle);
      try {
        return await work(held);
      } finally {
        held.idle = setTimeout(() => this.forget(taskId), IDLE_MS);
        held.idle.unref();
      }
    });
    current.turn = run.catch(() => undefined);
    // A load that failed leaves nothing behind: the next call loads again.
    current.ready.catch(() => {
      if (this.held.get(taskId) === current) this.held.delete(taskId);
    });
    return run;
  }

  /** Feeds the log from where the emulator is to its end, with each recorded size where it began. */
  private async feedAll(files: TaskFiles, held: Held): Promise<number> {
    const sizes = parseTerminalSizes(await fs.readFile(files.ttyEvents, 'utf8').catch(() => ''));
    const log = await fs.open(files.stdout, 'r');
    try {
      const { size } = await log.stat();
      const { emulator } = held;
      while (emulator.fed < size) {
        const bytes = await readRange(log, emulator.fed, Math.min(size, emulator.fed + FEED_CHUNK_BYTES));
        if (bytes.length === 0) break;
        // The checkpoint goes where a restored emulator can go on from: before an unfinished sequence.
        const cut = checkpointCut(bytes);
        await emulator.feed(bytes.subarray(0, cut), sizes);
        held.safe = true;
        if (cut < bytes.length) {
          if (emulator.fed - held.saved >= CHECKPOINT_EVERY_BYTES) await this.save(files, held);
          await emulator.feed(bytes.subarray(cut), sizes);
          held.safe = false;
        }
      }
      return emulator.fed;
    } finally {
      await log.close();
    }
  }

  /**
   * Saves the emulator as the task's checkpoint, unless it is there already, or mid-sequence, or
   * in a state a checkpoint does not carry (a scroll region, origin mode, another character set):
   * the checkpoint before it stays, and a new worker feeds more from there.
   */
  private async save(files: TaskFiles, held: Held): Promise<void> {
    const { emulator } = held;
    if (!held.safe || emulator.fed === held.saved || !emulator.restorable) return;
    await writeAtomically(files.screen, JSON.stringify(emulator.checkpoint()));
    held.saved = emulator.fed;
  }
}

/** The newest `lines` within `limitChars` (all without a limit); those left out count as missing. */
function newestWithin(
  lines: string[],
  missing: number,
  limitChars = Number.POSITIVE_INFINITY,
): { lines: string[]; missing: number } {
  let kept = lines.length;
  let chars = 0;
  while (kept > 0) {
    const next = (lines[kept - 1]?.length ?? 0) + (chars > 0 ? 1 : 0);
    if (chars + next > limitChars) break;
    chars += next;
    kept--;
  }
  return { lines: lines.slice(kept), missing: missing + kept };
}

/** The task's emulator from its checkpoint file (else from the start of its log), and its read marks. */
async function load(files: TaskFiles): Promise<Held> {
  const [checkpoint, marks] = await Promise.all([
    readJson<TerminalCheckpoint>(files.screen),
    readJson<Array<[number, number]>>(files.screenMarks),
  ]);
  if (checkpoint !== undefined) {
    const emulator = await TerminalEmulator.restore(checkpoint);
    return { emulator, marks: marks ?? [], saved: checkpoint.fed, safe: true };
  }
  const sizes = parseTerminalSizes(await fs.readFile(files.ttyEvents, 'utf8').catch(() => ''));
  const first: TerminalSize = sizes[0] ?? { cols: 120, rows: 40 };
  return { emulator: new TerminalEmulator(first), marks: marks ?? [], saved: -1, safe: true };
}

/** A JSON file's content, or undefined when it is missing or unreadable (it is then rebuilt). */
function readJson<T>(file: string): Promise<T | undefined> {
  return fs
    .readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as T)
    .catch(() => undefined);
}

/** The scroll count when the log was at `offset`: the latest mark at or before it (none: the start). */
function scrolledAt(marks: ReadonlyArray<[number, number]>, offset: number): number {
  let scrolled = 0;
  for (const [at, count] of marks) if (at <= offset) scrolled = count;
  return scrolled;
}
