/**
 * A terminal task's screen, rendered from its byte log (the stdout spill file, which holds what
 * the program wrote to its terminal) by a real terminal emulator, `@xterm/headless`, with each
 * size the terminal had applied at the byte where it began (the supervisor's `--tty-events`
 * record). The same bytes and sizes give the same screen, whichever worker renders them, so the
 * screen a read shows survives a worker's restart.
 */
import { SerializeAddon } from '@xterm/addon-serialize';
import xterm from '@xterm/headless';
import type { TerminalScreen, TerminalSize } from '../shared/terminal.js';

export type { TerminalScreen, TerminalSize } from '../shared/terminal.js';

/** An emulator's state at a byte of the log, as `TerminalEmulator.checkpoint` keeps it. */
export interface TerminalCheckpoint {
  fed: number;
  cols: number;
  rows: number;
  /** What replays the screen, scrollback, cursor and modes in a new emulator (@xterm/addon-serialize). */
  state: string;
}

/** The `--tty-events` record: one `<offset> <cols>x<rows>` a line; a line cut short is left out. */
export function parseTerminalSizes(text: string): TerminalSize[] {
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

  constructor(size: { cols: number; rows: number }, scrollback = 1_000) {
    this.terminal = new xterm.Terminal({ ...size, scrollback, allowProposedApi: true });
    this.terminal.loadAddon(this.serializer);
  }

  /**
   * Feeds `bytes`, the log from `this.fed` on, resizing at each size's offset within them.
   * Sizes before `this.fed` were applied already.
   */
  async feed(bytes: Uint8Array, sizes: readonly TerminalSize[]): Promise<void> {
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
    return {
      fed: this.fed,
      cols: this.terminal.cols,
      rows: this.terminal.rows,
      state: this.serializer.serialize(),
    };
  }

  /** An emulator that goes on from `checkpoint`: feeding it the log after `checkpoint.fed` costs only that. */
  static async restore(checkpoint: TerminalCheckpoint, scrollback = 1_000): Promise<TerminalEmulator> {
    const emulator = new TerminalEmulator(checkpoint, scrollback);
    await emulator.write(Buffer.from(checkpoint.state));
    emulator.fed = checkpoint.fed;
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

/** The screen after all of `log`, with its sizes: the first size is the terminal's at offset 0. */
export async function renderTerminal(
  log: Uint8Array,
  sizes: readonly TerminalSize[],
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
