/**
 * A terminal task's screen, rendered from its byte log (the stdout spill file, which holds what
 * the program wrote to its terminal) by a real terminal emulator, `@xterm/headless`, with each
 * size the terminal had applied at the byte where it began (the supervisor's `--tty-events`
 * record). The same bytes and sizes give the same screen, whichever worker renders them, so the
 * screen a read shows survives a worker's restart.
 */
import { SerializeAddon } from '@xterm/addon-serialize';
import xterm from '@xterm/headless';
import { unfinishedCharLength } from '../../shared/stream-text.js';
import type { TerminalScreen, TerminalSizeAt } from '../../shared/terminal.js';

export type { TerminalScreen, TerminalSizeAt } from '../../shared/terminal.js';

/** An emulator's state at a byte of the log, as `TerminalEmulator.checkpoint` keeps it. */
export interface TerminalCheckpoint {
  fed: number;
  cols: number;
  rows: number;
  /** Lines that had scrolled off the screen by then, counted from the start of the log. */
  scrolled?: number;
  /** What replays the screen, scrollback, cursor and modes in a new emulator (@xterm/addon-serialize). */
  state: string;
  /** Where DECSC (`ESC 7`) saved the cursor, which the serialized state leaves out (0-based). */
  savedCursor?: { x: number; y: number };
}

/** The `--tty-events` record: one `<offset> <cols>x<rows>` a line; a line cut short is left out. */
export function parseTerminalSizes(text: string): TerminalSizeAt[] {
  return text.split('\n').flatMap((line) => {
    const match = /^(\d+) (\d+)x(\d+)$/.exec(line);
    return match ? [{ offset: Number(match[1]), cols: Number(match[2]), rows: Number(match[3]) }] : [];
  });
}

/** An emulator fed a terminal's log: the screen, and a checkpoint to go on from later. */
export class TerminalEmulator {
  private readonly terminal: InstanceType<typeof xterm.Terminal>;
  private readonly serializer = new SerializeAddon();
  /** Bytes of the log fed so far. */
  fed = 0;
  /**
   * Scrolled-off lines no longer held (the scrollback is full, or a checkpoint did not carry them):
   * line `n` of the log's scrollback is line `n - dropped` of the normal buffer.
   */
  private dropped = 0;
  /** The most lines ever counted as scrolled off: a resize can pull lines back onto the screen. */
  private scrolledHigh = 0;

  constructor(size: { cols: number; rows: number }, scrollback = 1_000) {
    this.terminal = new xterm.Terminal({ ...size, scrollback, allowProposedApi: true });
    this.terminal.loadAddon(this.serializer);
    // xterm has no public event for lines leaving a full scrollback; its buffer's own one counts them.
    // Without it (another xterm build) trimmed lines go uncounted, and scrolled-off reads say less.
    const lines = (this.terminal as unknown as TerminalInternals)._core?._bufferService?.buffers?.normal
      ?.lines;
    lines?.onTrim?.((count: number) => {
      this.dropped += count;
    });
  }

  /**
   * Whether a checkpoint restores this state: @xterm/addon-serialize leaves out a scroll region,
   * origin mode and a designated character set, so a checkpoint is not taken while one is in
   * effect (the saved cursor it leaves out too is carried in the checkpoint). True when xterm's
   * internals cannot say.
   */
  get restorable(): boolean {
    const core = (this.terminal as unknown as TerminalInternals)._core;
    const buffer = core?._bufferService?.buffer;
    if (
      buffer?.scrollTop !== undefined &&
      (buffer.scrollTop !== 0 || buffer.scrollBottom !== this.terminal.rows - 1)
    )
      return false;
    if (core?.coreService?.decPrivateModes?.origin === true) return false;
    const charsets = core?._charsetService;
    return !(charsets && (charsets.charset !== undefined || (charsets.glevel ?? 0) !== 0));
  }

  /** How many lines have scrolled off the screen into the scrollback since the log began. */
  get scrolled(): number {
    this.scrolledHigh = Math.max(this.scrolledHigh, this.dropped + this.terminal.buffer.normal.baseY);
    return this.scrolledHigh;
  }

  /**
   * The lines that scrolled off between counts `from` and `to` (see `scrolled`), oldest first, a
   * wrapped line joined back; with how many of them are no longer held.
   */
  scrolledOff(from: number, to = this.scrolled): { lines: string[]; missing: number } {
    const normal = this.terminal.buffer.normal;
    const lines: string[] = [];
    let missing = 0;
    for (let n = Math.max(0, from); n < to; n++) {
      const line = n - this.dropped < normal.baseY ? normal.getLine(n - this.dropped) : undefined;
      if (line === undefined) {
        missing++;
        continue;
      }
      const text = line.translateToString(true).replace(/ +$/, '');
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    return { lines, missing };
  }

  /**
   * Feeds `bytes`, the log from `this.fed` on, resizing at each size's offset within them.
   * Sizes before `this.fed` were applied already.
   */
  async feed(bytes: Uint8Array, sizes: readonly TerminalSizeAt[]): Promise<void> {
    let at = 0;
    for (const size of sizes) {
      const offset = size.offset - this.fed;
      if (offset < at || offset > bytes.length) continue;
      await this.write(bytes.subarray(at, offset));
      at = offset;
      if (size.cols !== this.terminal.cols || size.rows !== this.terminal.rows)
        this.terminal.resize(size.cols, size.rows);
    }
    await this.write(bytes.subarray(at));
    this.fed += bytes.length;
  }

  screen(): TerminalScreen {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < this.terminal.rows; row++)
      // Written spaces count as cells for xterm's own trim: the row is trimmed of them too.
      lines.push((buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '').replace(/ +$/, ''));
    return {
      cols: this.terminal.cols,
      rows: this.terminal.rows,
      lines,
      cursor: { row: buffer.cursorY + 1, column: buffer.cursorX + 1 },
      applicationCursor: this.terminal.modes.applicationCursorKeysMode,
    };
  }

  /** The emulator's state as it stands (screen, scrollback, cursor, modes), with where it is in the log. */
  checkpoint(): TerminalCheckpoint {
    const buffer = (this.terminal as unknown as TerminalInternals)._core?._bufferService?.buffer;
    return {
      fed: this.fed,
      cols: this.terminal.cols,
      rows: this.terminal.rows,
      scrolled: this.scrolled,
      state: this.serializer.serialize(),
      ...(buffer?.savedX !== undefined && buffer.savedY !== undefined
        ? // xterm keeps the saved row counted from the scrollback's top: the screen's row is what restores.
          {
            savedCursor: {
              x: buffer.savedX,
              y: Math.max(0, buffer.savedY - this.terminal.buffer.active.baseY),
            },
          }
        : {}),
    };
  }

  /** An emulator that goes on from `checkpoint`: feeding it the log after `checkpoint.fed` costs only that. */
  static async restore(checkpoint: TerminalCheckpoint, scrollback = 1_000): Promise<TerminalEmulator> {
    const emulator = new TerminalEmulator(checkpoint, scrollback);
    await emulator.write(Buffer.from(checkpoint.state));
    const saved = checkpoint.savedCursor;
    if (saved !== undefined) {
      // Save that cursor again (move there, DECSC), then go back to where the state left it.
      const { cursorX, cursorY } = emulator.terminal.buffer.active;
      await emulator.write(
        Buffer.from(`\x1b[${saved.y + 1};${saved.x + 1}H\x1b7\x1b[${cursorY + 1};${cursorX + 1}H`),
      );
    }
    emulator.fed = checkpoint.fed;
    // The replayed scrollback holds the newest of the lines that had scrolled off.
    const scrolled = checkpoint.scrolled ?? emulator.terminal.buffer.normal.baseY;
    emulator.dropped = Math.max(0, scrolled - emulator.terminal.buffer.normal.baseY);
    emulator.scrolledHigh = scrolled;
    return emulator;
  }

  dispose(): void {
    this.terminal.dispose();
  }

  private write(bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.terminal.write(bytes, resolve));
  }
}

/** What of xterm's internals the scrolled-off count reads (see the constructor). */
interface TerminalInternals {
  _core?: {
    _bufferService?: {
      buffers?: { normal?: { lines?: { onTrim?: (listener: (count: number) => void) => void } } };
      buffer?: { scrollTop?: number; scrollBottom?: number; savedX?: number; savedY?: number };
    };
    coreService?: { decPrivateModes?: { origin?: boolean } };
    _charsetService?: { charset?: unknown; glevel?: number };
  };
}

/**
 * How much of `bytes` (the log from a checkpoint on) a checkpoint may take: not into an escape
 * sequence or a character still being written, whose start a restored emulator would not know.
 */
export function checkpointCut(bytes: Uint8Array): number {
  const lastEsc = bytes.lastIndexOf(0x1b);
  if (lastEsc >= 0 && !sequenceComplete(bytes.subarray(lastEsc))) return lastEsc;
  return bytes.length - unfinishedCharLength(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
}

/** Whether the escape sequence `sequence` starts with (the log's last ESC) is complete. */
function sequenceComplete(sequence: Uint8Array): boolean {
  const kind = sequence[1];
  if (kind === undefined) return false;
  // ST (ESC \\) ends a string sequence that began before it.
  if (kind === 0x5c) return true;
  // CSI: parameter and intermediate bytes, then a final byte.
  if (kind === 0x5b) return sequence.subarray(2).some((byte) => byte >= 0x40 && byte <= 0x7e);
  // OSC, DCS, SOS, PM, APC: a string up to BEL (or ST, which is an ESC of its own).
  if ([0x5d, 0x50, 0x58, 0x5e, 0x5f].includes(kind)) return sequence.includes(0x07, 2);
  // Intermediate bytes (ESC ( B), then a final byte.
  if (kind >= 0x20 && kind <= 0x2f) return sequence.subarray(2).some((byte) => byte >= 0x30 && byte <= 0x7e);
  return true;
}

/** The screen after all of `log`, with its sizes: the first size is the terminal's at offset 0. */
export async function renderTerminal(
  log: Uint8Array,
  sizes: readonly TerminalSizeAt[],
): Promise<TerminalScreen> {
  const first = sizes[0] ?? { offset: 0, cols: 120, rows: 40 };
  const emulator = new TerminalEmulator(first);
  try {
    await emulator.feed(log, sizes);
    return emulator.screen();
  } finally {
    emulator.dispose();
  }
}
