import { describe, expect, it } from 'vitest';
import {
  parseTerminalSizes,
  renderTerminal,
  TerminalEmulator,
} from '../../../src/command-host/terminal/terminal-screen.js';

const bytes = (text: string) => Buffer.from(text);

describe("a terminal task's screen", () => {
  it('is what an xterm shows after the log: moves, colours and erases applied, rows right-trimmed', async () => {
    const screen = await renderTerminal(bytes('hello\r\nworld\x1b[1;3H\x1b[31mX\x1b[0m\x1b[3;1Hbye   '), [
      { offset: 0, cols: 20, rows: 4 },
    ]);
    expect(screen).toEqual({
      cols: 20,
      rows: 4,
      lines: ['heXlo', 'world', 'bye', ''],
      cursor: { row: 3, column: 7 },
      applicationCursor: false,
    });
  });

  it('shows the last rows once the output scrolled, and the mode a full-screen program set', async () => {
    const log = `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\r\n')}\x1b[?1h`;
    const screen = await renderTerminal(bytes(log), [{ offset: 0, cols: 20, rows: 3 }]);
    expect(screen.lines).toEqual(['line 8', 'line 9', 'line 10']);
    expect(screen.applicationCursor).toBe(true);
  });

  it('applies each size at the byte where it began', async () => {
    // 30 characters at 10 columns wrap to 3 rows; what comes after the resize to 40 columns is one row.
    const first = 'a'.repeat(30);
    const log = `${first}\r\n${'b'.repeat(30)}`;
    const sizes = parseTerminalSizes(`0 10x5\n${first.length + 2} 40x5\n`);
    expect(sizes).toEqual([
      { offset: 0, cols: 10, rows: 5 },
      { offset: 32, cols: 40, rows: 5 },
    ]);
    const screen = await renderTerminal(bytes(log), sizes);
    expect(screen.cols).toBe(40);
    expect(screen.lines.filter((line) => line.startsWith('b'))).toEqual(['b'.repeat(30)]);
  });

  it('renders the same screen fed in pieces as all at once, so a read costs only what is new', async () => {
    const log = bytes('one\r\ntwo\x1b[2J\x1b[Hthree\r\n\x1b[1mfour');
    const sizes = [{ offset: 0, cols: 12, rows: 3 }];
    const whole = await renderTerminal(log, sizes);
    const emulator = new TerminalEmulator(sizes[0] as { cols: number; rows: number });
    for (let at = 0; at < log.length; at += 5) await emulator.feed(log.subarray(at, at + 5), sizes);
    expect(emulator.screen()).toEqual(whole);
    expect(whole.lines).toEqual(['three', 'four', '']);
    emulator.dispose();
  });

  it('leaves out a size line cut short', () => {
    expect(parseTerminalSizes('0 80x24\n120 100x3')).toEqual([
      { offset: 0, cols: 80, rows: 24 },
      { offset: 120, cols: 100, rows: 3 },
    ]);
    expect(parseTerminalSizes('0 80x24\n12 10')).toEqual([{ offset: 0, cols: 80, rows: 24 }]);
  });

  it('goes on from a checkpoint to the same screen as from the start', async () => {
    const sizes = [{ offset: 0, cols: 16, rows: 4 }];
    const before = bytes('\x1b[?1hmenu\r\n\x1b[7m> first\x1b[0m\r\n  second');
    const after = bytes('\x1b[2;1H  first\r\n\x1b[7m> second\x1b[0m');
    const emulator = new TerminalEmulator(sizes[0] as { cols: number; rows: number });
    await emulator.feed(before, sizes);
    const checkpoint = emulator.checkpoint();
    emulator.dispose();
    const restored = await TerminalEmulator.restore(checkpoint);
    expect(restored.fed).toBe(before.length);
    await restored.feed(after, sizes);
    expect(restored.screen()).toEqual(await renderTerminal(Buffer.concat([before, after]), sizes));
    expect(restored.screen().lines).toEqual(['menu', '  first', '> second', '']);
    expect(restored.screen().applicationCursor).toBe(true);
    restored.dispose();
  });
});
