/**
 * What the command splitter knows of a bash word once it is read: its text with quotes removed, and
 * whether bash may still change it (an expansion, a glob). Shared by the walk of tree-sitter-bash's
 * tree (split-commands.ts) and the wrapper rules (command-wrappers.ts), which the grammar cannot know.
 */

export interface Word {
  /** The word with quotes removed; expansions stay as written. */
  text: string;
  /** No expansion in it: `text` is exactly what bash passes. */
  literal: boolean;
  /** Some part was quoted or escaped (a quoted `if` is no keyword). */
  quoted: boolean;
  /** Unquoted glob or brace characters: bash may turn it into other words. */
  pattern: boolean;
  /** `NAME=value` (or `NAME+=`, `NAME[i]=`) with the name unquoted: an assignment, not a command. */
  assignment: boolean;
  /**
   * An assignment the walk took from the grammar's tree as written, quotes and all (`export
   * A='x'`), whose value it reads where it stands (split-commands.ts); `text` is not what bash passes.
   */
  asWritten?: true;
}

export const ASSIGNMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?$/;

/** A path a shell or `source` reads its standard input through. */
export const STDIN_PATH = /^(?:-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/[^/]+\/fd\/\d+)$/;

/** Longest piece of a command quoted in a reason. */
const SHOWN_CHARS = 60;

/** `text` on one line, cut to `SHOWN_CHARS`: a piece of a command quoted in a reason. */
export function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS - 1)}…` : line;
}

/** Reserved words that may open or continue a command without being one. */
export const PASS_THROUGH_KEYWORDS = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'while',
  'until',
  'do',
  'done',
  'esac',
]);

/** Reserved words that open a compound command whose parts the parse reads as they come. */
export const COMPOUND_OPENERS = new Set(['for', 'select', 'case', '[[', 'function']);

export function emptyWord(): Word {
  return { text: '', literal: true, quoted: false, pattern: false, assignment: false };
}

/** An unquoted reserved word from `words`. */
export function isKeyword(word: Word, words: ReadonlySet<string>): boolean {
  return word.literal && !word.quoted && words.has(word.text);
}

export function dropAssignments(words: Word[]): Word[] {
  let first = 0;
  while (first < words.length && (words[first] as Word).assignment) first++;
  return words.slice(first);
}

export function basename(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** `text` quoted for a shell: bash reads it back as exactly `text`. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Decodes the body of `$'...'` from `start` (after the quote); undefined when it never closes. */
export function decodeAnsiC(src: string, start: number): { text: string; end: number } | undefined {
  const simple: Record<string, string> = {
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
    '?': '?',
  };
  let text = '';
  let i = start;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "'") return { text, end: i + 1 };
    if (c !== '\\') {
      text += c;
      i++;
      continue;
    }
    const next = src[i + 1];
    if (next === undefined) return undefined;
    const simpleEscape = simple[next];
    if (simpleEscape !== undefined) {
      text += simpleEscape;
      i += 2;
      continue;
    }
    const numeric = numericEscape(src, i);
    if (numeric !== undefined) {
      text += numeric.code <= 0x10ffff ? String.fromCodePoint(numeric.code) : '';
      i += numeric.length;
      continue;
    }
    if (next === 'c' && src[i + 2] !== undefined) {
      text += String.fromCharCode((src[i + 2] as string).charCodeAt(0) & 0x1f);
      i += 3;
      continue;
    }
    text += `\\${next}`;
    i += 2;
  }
  return undefined;
}

/** `\NNN` (octal), `\xHH`, `\uHHHH` or `\UHHHHHHHH` at `i`: the code point and the escape's length. */
function numericEscape(src: string, i: number): { code: number; length: number } | undefined {
  const forms: [RegExp, number, number][] = [
    [/^\\([0-7]{1,3})/, 8, 1],
    [/^\\x([0-9a-fA-F]{1,2})/, 16, 2],
    [/^\\u([0-9a-fA-F]{1,4})/, 16, 2],
    [/^\\U([0-9a-fA-F]{1,8})/, 16, 2],
  ];
  const rest = src.slice(i, i + 10);
  for (const [form, radix, prefix] of forms) {
    const digits = form.exec(rest)?.[1];
    if (digits !== undefined) return { code: Number.parseInt(digits, radix), length: prefix + digits.length };
  }
  return undefined;
}
