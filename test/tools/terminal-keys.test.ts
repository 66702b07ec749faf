import { describe, expect, it } from 'vitest';
import { keyBytes } from '../../src/shared/terminal-keys.js';

describe("bash_input's keys", () => {
  it('sends the bytes an xterm sends for each named key, in order', () => {
    expect(keyBytes(['Enter', 'Tab', 'BTab', 'Escape', 'BSpace', 'Space'])).toBe('\r\t\x1b[Z\x1b\x7f ');
    expect(keyBytes(['Up', 'Down', 'Right', 'Left', 'Home', 'End'])).toBe(
      '\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F',
    );
    expect(keyBytes(['PageUp', 'PageDown', 'Insert', 'Delete'])).toBe('\x1b[5~\x1b[6~\x1b[2~\x1b[3~');
    expect(keyBytes(['F1', 'F4', 'F5', 'F10', 'F12'])).toBe('\x1bOP\x1bOS\x1b[15~\x1b[21~\x1b[24~');
  });

  it('sends control characters, meta as ESC first, and single characters as themselves', () => {
    expect(keyBytes(['C-c', 'C-d', 'C-z', 'C-a', 'C-C', 'C-[', 'C-?', 'C-@', 'C-Space'])).toBe(
      '\x03\x04\x1a\x01\x03\x1b\x7f\x00\x00',
    );
    expect(keyBytes(['M-x', 'M-Enter', 'C-M-c'])).toBe('\x1bx\x1b\r\x1b\x03');
    expect(keyBytes(['q', ':', 'y', 'é', 'S-a'])).toBe('q:yéA');
  });

  it("gives modified cursor and function keys xterm's parameter", () => {
    expect(keyBytes(['C-Up', 'S-Left', 'M-Right', 'C-S-End'])).toBe('\x1b[1;5A\x1b[1;2D\x1b[1;3C\x1b[1;6F');
    expect(keyBytes(['C-PageDown', 'S-F5', 'C-F1'])).toBe('\x1b[6;5~\x1b[15;2~\x1b[1;5P');
    expect(keyBytes(['S-Tab'])).toBe('\x1b[Z');
  });

  it('sends the cursor keys as SS3 sequences in application cursor mode', () => {
    expect(keyBytes(['Up', 'Left', 'Home'], { applicationCursor: true })).toBe('\x1bOA\x1bOD\x1bOH');
    expect(keyBytes(['C-Up'], { applicationCursor: true })).toBe('\x1b[1;5A');
  });

  it('refuses, in one line, a name that is no key', () => {
    for (const name of ['Return', 'F13', 'C-1', 'ab', '', 'C-Enter'])
      expect(() => keyBytes(['Enter', name])).toThrow(
        `unknown key ${JSON.stringify(name)}: a key is a name (`,
      );
  });
});
