import { describe, expect, it } from 'vitest';
import { renderTerminal } from '../../src/command-host/terminal/terminal-screen.js';
import { renderScreen } from '../../src/shared/render-screen.js';

describe("a terminal task's screen as the model reads it", () => {
  it('gives the rows as they appear, trailing blank rows dropped, then the size and the cursor', async () => {
    const screen = await renderTerminal(Buffer.from('\x1b[1mtop\x1b[0m - 10:00\r\n\r\n  PID USER\x1b[5;1H'), [
      { offset: 0, cols: 30, rows: 8 },
    ]);
    expect(renderScreen(screen)).toBe('top - 10:00\n\n  PID USER\n[screen: 30x8, cursor at row 5, column 1]');
  });

  it('gives only the size line for a blank screen', async () => {
    const screen = await renderTerminal(Buffer.from(''), [{ offset: 0, cols: 120, rows: 40 }]);
    expect(renderScreen(screen)).toBe('[screen: 120x40, cursor at row 1, column 1]');
  });
});
