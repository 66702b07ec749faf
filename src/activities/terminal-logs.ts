/**
 * The screens of this host's terminal tasks, rendered from their logs (terminal-screen.ts) for
 * reads, writes and ends. Each task's emulator is kept in memory while it is in use, so a read
 * feeds only what is new, and saved every 64 KiB of log as a checkpoint file beside its spill
 * files (`<task id>.screen`), from which a restarted worker goes on to the same screen. One task's
 * renders run one at a time.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import type { TerminalEnd } from '../shared/task.js';
import type { TerminalScreen, TerminalSize } from '../shared/terminal.js';
import type { TaskFiles } from './task-files.js';
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

/** What a checkpoint file holds: the emulator's state, and the scroll count at recent reads' ends. */
interface CheckpointFile extends TerminalCheckpoint {
  /** `[log offset, lines scrolled off by then]`, oldest first. */
  marks: Array<[number, number]>;
}

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
  static async isTerminal(files: TaskFiles): Promise<boolean> {
    return fs.stat(files.ttyEvents).then(
      () => true,
      () => false,
    );
  }

  /**
   * The screen after the whole log as it stands (at least `upTo` bytes of it), saved as the
   * task's checkpoint; with `scrolledFrom` (a read position in the log), also what scrolled off since.
   */
  render(files: TaskFiles, options: { scrolledFrom?: number } = {}): Promise<TerminalRender> {
    return this.withEmulator(files, async (held) => {
      const size = await this.feedAll(files, held);
      const { emulator } = held;
      const render: TerminalRender = { screen: emulator.screen(), fed: size };
      if (options.scrolledFrom !== undefined) {
        render.scrolledOff = emulator.scrolledOff(scrolledAt(held.marks, options.scrolledFrom));
      }
      const marks = [
        ...held.marks.filter(([at]) => at < size),
        [size, emulator.scrolled] as [number, number],
      ];
      held.marks = marks.slice(-MARKS_KEPT);
      // A checkpoint costs a serialization of the screen and scrollback: saved once the log has
      // grown a while past the last one, so a read costs what is new (a restart re-feeds the rest).
      if (size - held.saved >= CHECKPOINT_EVERY_BYTES) await this.save(files, held, true);
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
      const { lines, missing } = held.emulator.scrolledOff(0);
      let dropped = missing;
      let text = lines.join('\n');
      while (text.length > limitChars && lines.length > 0) {
        lines.shift();
        dropped++;
        text = lines.join('\n');
      }
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
        const length = Math.min(FEED_CHUNK_BYTES, size - emulator.fed);
        const chunk = Buffer.alloc(length);
        const { bytesRead } = await log.read(chunk, 0, length, emulator.fed);
        if (bytesRead === 0) break;
        const bytes = chunk.subarray(0, bytesRead);
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

  /** Saves the emulator as the task's checkpoint (`force`: its marks changed), unless it is mid-sequence. */
  private async save(files: TaskFiles, held: Held, force = false): Promise<void> {
    const { emulator } = held;
    if (!held.safe || (emulator.fed === held.saved && !force)) return;
    const checkpoint: CheckpointFile = { ...emulator.checkpoint(), marks: held.marks };
    // Unique: another worker process (or instance) may save the same task's screen at once.
    const temporary = `${files.screen}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
    await fs.writeFile(temporary, JSON.stringify(checkpoint), { mode: 0o600 });
    await fs.rename(temporary, files.screen);
    held.saved = emulator.fed;
  }
}

/** The task's emulator from its checkpoint file, else from the start of its log. */
async function load(files: TaskFiles): Promise<Held> {
  const checkpoint = await fs
    .readFile(files.screen, 'utf8')
    .then((text) => JSON.parse(text) as CheckpointFile)
    .catch(() => undefined);
  if (checkpoint !== undefined) {
    const emulator = await TerminalEmulator.restore(checkpoint);
    const marks = checkpoint.marks ?? [];
    return { emulator, marks, saved: checkpoint.fed, safe: true };
  }
  const sizes = parseTerminalSizes(await fs.readFile(files.ttyEvents, 'utf8').catch(() => ''));
  const first: TerminalSize = sizes[0] ?? { cols: 120, rows: 40 };
  return { emulator: new TerminalEmulator(first), marks: [], saved: -1, safe: true };
}

/** The scroll count when the log was at `offset`: the latest mark at or before it (none: the start). */
function scrolledAt(marks: ReadonlyArray<[number, number]>, offset: number): number {
  let scrolled = 0;
  for (const [at, count] of marks) if (at <= offset) scrolled = count;
  return scrolled;
}
