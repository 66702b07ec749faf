/**
 * The shown form: a text (a command, a workdir, a reason) as a person reads it to decide on it, on a
 * terminal or a page, where nothing in it can move the cursor, hide, reorder the line or pass for
 * something it is not. Every character is itself, except:
 * - `\\` a backslash, so no other escape can be mistaken for text;
 * - `\e` ESC, `\r` a carriage return, `\t` a tab, `\n` a line break (in the one-line form);
 * - `\xHH` any other ASCII control character (U+0000-U+001F, U+007F);
 * - `\u{H}` a character that shows nothing or can pass for another: C1 controls, format characters
 *   (bidi overrides, zero-width spaces), line and paragraph separators, spaces other than U+0020,
 *   default-ignorable, private-use, unassigned and lone surrogate code points;
 * - `\x20{N}` N spaces: a run that starts or ends the text (in the line form, that ends a line or
 *   indents it more than 16 spaces), or one longer than three spaces, so that no run of blanks can
 *   hide or pad away what follows it.
 * Pure and workflow-safe: the CLI, the MCP server and the Web UI's markdown (shown-markdown.ts) use it.
 */

/**
 * Longest run of spaces shown as spaces: enough for the gaps people type (aligned comments, two
 * spaces after a period); a longer run is counted, so it cannot push a command's tail out of sight.
 */
const LONGEST_PLAIN_SPACE_RUN_CHARS = 3;

/**
 * Deepest indentation the line form keeps as spaces: four levels of four spaces. Deeper is no
 * indentation a person reads at a glance; counted, it cannot push a line's text out of sight, and
 * kept, it always fits a row (the CLI's rows are at least 28 characters wide).
 */
const LONGEST_PLAIN_INDENT_CHARS = 16;

/** The named escapes of ASCII control characters; the others are `\xHH`. */
const NAMED_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\u001b': '\\e',
  '\r': '\\r',
  '\t': '\\t',
  '\n': '\\n',
};

/**
 * Characters that show nothing, or can pass for another: other controls, format characters (bidi,
 * zero-width), line and paragraph separators, private-use, unassigned and lone surrogates, every
 * default-ignorable code point (variation selectors, fillers), a space that is not U+0020, and the
 * braille blank (U+2800), which is a symbol that prints as a space.
 */
const INVISIBLE =
  /^(?:[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}\u2800]|(?! )\p{Zs})$/u;

/** One character in the shown form: itself, or its escape. */
function shownChar(char: string): string {
  const named = NAMED_ESCAPES[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  return INVISIBLE.test(char) ? `\\u{${code.toString(16).toUpperCase()}}` : char;
}

/**
 * `text` in the shown form as pieces, each one character or one escape (so a layout that wraps or
 * cuts never splits an escape). `leadingSpaces: 'kept'` keeps a run of spaces at the start as
 * spaces, up to LONGEST_PLAIN_INDENT_CHARS (a line's indentation, in the line form).
 */
function shownPieces(text: string, leadingSpaces: 'kept' | 'counted'): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  let at = 0;
  while (at < chars.length) {
    const char = chars[at] as string;
    if (char !== ' ') {
      pieces.push(shownChar(char));
      at += 1;
      continue;
    }
    let end = at;
    while (chars[end] === ' ') end += 1;
    const run = end - at;
    const indentation = at === 0 && leadingSpaces === 'kept';
    const counted =
      end === chars.length ||
      (at === 0 && leadingSpaces === 'counted') ||
      run > (indentation ? LONGEST_PLAIN_INDENT_CHARS : LONGEST_PLAIN_SPACE_RUN_CHARS);
    if (counted) pieces.push(`\\x20{${run}}`);
    else for (let i = 0; i < run; i += 1) pieces.push(' ');
    at = end;
  }
  return pieces;
}

/** `text` in the shown form on one line: its line breaks too are escapes (`\n`). */
export function shownLine(text: string): string {
  return shownPieces(text, 'counted').join('');
}

/**
 * `text` in the shown form, one entry a line of it (split at `\n` only: a carriage return stays
 * `\r`). A line's indentation (up to 16 spaces) is kept as spaces; its trailing spaces are counted
 * (`\x20{N}`).
 */
export function shownLines(text: string): string[] {
  return text.split('\n').map((line) => shownPieces(line, 'kept').join(''));
}

/**
 * `text` on one line in the shown form, in rows of at most `widthChars` characters: each row but
 * the last ends with a lone `\`, which the form cannot hold otherwise (a backslash is `\\`): the
 * text goes on in the next row. A row never starts with a space, so none is lost at a break.
 */
export function shownRows(text: string, widthChars: number): string[] {
  return wrapPieces(shownPieces(text, 'counted'), widthChars);
}

/**
 * `text` in the shown form, a line of it at a time, each line in rows as `shownRows` makes them:
 * a row ending in a lone `\` goes on in the next; any other row ends a line of the text.
 */
export function shownLineRows(text: string, widthChars: number): string[] {
  return text.split('\n').flatMap((line) => wrapPieces(shownPieces(line, 'kept'), widthChars));
}

/**
 * `text` on one line in the shown form, cut to at most `widthChars` characters, the cut marked
 * `…`: for a listing's column, where the whole text is a command away.
 */
export function shownLineCut(text: string, widthChars: number): string {
  const pieces = shownPieces(text, 'counted');
  if (pieces.join('').length <= widthChars) return pieces.join('');
  let row = '';
  for (const piece of pieces) {
    if (row.length + piece.length > widthChars - 1) break;
    row += piece;
  }
  return `${row}…`;
}

/**
 * Pieces in rows of at most `widthChars` characters, each row but the last ending with `\`. A row
 * breaks after its last space when that leaves the next row little (a word carried whole), else
 * where it is full.
 */
function wrapPieces(pieces: string[], widthChars: number): string[] {
  // Room for the `\` and for the spaces of a run kept on the row before a break.
  const room = Math.max(1, widthChars - 1 - LONGEST_PLAIN_SPACE_RUN_CHARS);
  const rows: string[] = [];
  let row: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    if (row.length > 0 && length + piece.length > room) {
      // A break never leaves a space at the start of the next row, where it could not be seen.
      if (piece === ' ') {
        row.push(piece);
        length += 1;
        continue;
      }
      const lastSpace = row.lastIndexOf(' ');
      const carried = lastSpace > 0 ? row.slice(lastSpace + 1) : [];
      const carriedLength = carried.join('').length;
      const carry = lastSpace > 0 && carriedLength <= room / 3;
      rows.push(`${(carry ? row.slice(0, lastSpace + 1) : row).join('')}\\`);
      row = carry ? carried : [];
      length = carry ? carriedLength : 0;
    }
    row.push(piece);
    length += piece.length;
  }
  rows.push(row.join(''));
  return rows;
}
