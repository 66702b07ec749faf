/**
 * `bash_input`'s `keys`: key names in tmux's spelling (`send-keys`), turned into the bytes an xterm
 * sends for them. A name is a key (`Enter`, `Up`, `F5`, ...) or one character, with any of the
 * modifiers `C-` (control), `M-` (meta: ESC first) and `S-` (shift) before it. Hand-written: the
 * table is xterm's (ctlseqs, "PC-Style Function Keys"), and no maintained package maps tmux's names.
 */

/** Keys whose sequence is `CSI <code> ~` (with modifiers `CSI <code> ; <m> ~`). */
const TILDE_KEYS: Readonly<Record<string, number>> = {
  Insert: 2,
  IC: 2,
  Delete: 3,
  DC: 3,
  PageUp: 5,
  PgUp: 5,
  PPage: 5,
  PageDown: 6,
  PgDn: 6,
  NPage: 6,
  F5: 15,
  F6: 17,
  F7: 18,
  F8: 19,
  F9: 20,
  F10: 21,
  F11: 23,
  F12: 24,
};

/** Keys whose sequence is `CSI <final>` (`SS3 <final>` in application cursor mode, or for F1-F4). */
const FINAL_KEYS: Readonly<Record<string, string>> = {
  Up: 'A',
  Down: 'B',
  Right: 'C',
  Left: 'D',
  Home: 'H',
  End: 'F',
  F1: 'P',
  F2: 'Q',
  F3: 'R',
  F4: 'S',
};

/** Keys that are one control character, unmodified. */
const PLAIN_KEYS: Readonly<Record<string, string>> = {
  Enter: '\r',
  Tab: '\t',
  BTab: '\x1b[Z',
  Escape: '\x1b',
  BSpace: '\x7f',
  Space: ' ',
};

export interface KeyOptions {
  /**
   * The terminal's application cursor mode (DECCKM, set by full-screen programs): arrows, Home and
   * End then send `SS3` sequences, as a terminal in that mode does.
   */
  applicationCursor?: boolean;
}

/** The bytes for `keys`, in order; throws one line naming the first key it cannot send. */
export function keyBytes(keys: readonly string[], options: KeyOptions = {}): string {
  return keys.map((key) => oneKey(key, options)).join('');
}

function oneKey(name: string, options: KeyOptions): string {
  let rest = name;
  let ctrl = false;
  let meta = false;
  let shift = false;
  // Modifiers, in any order; a key name of its own ("C-" alone) is the character itself.
  for (;;) {
    const prefix = rest.slice(0, 2);
    if (rest.length <= 2 || (prefix !== 'C-' && prefix !== 'M-' && prefix !== 'S-')) break;
    if (prefix === 'C-') ctrl = true;
    else if (prefix === 'M-') meta = true;
    else shift = true;
    rest = rest.slice(2);
  }
  const metaPrefix = meta ? '\x1b' : '';
  const modifier = 1 + (shift ? 1 : 0) + (meta ? 2 : 0) + (ctrl ? 4 : 0);
  if (rest in TILDE_KEYS) {
    const code = TILDE_KEYS[rest];
    return modifier === 1 ? `\x1b[${code}~` : `\x1b[${code};${modifier}~`;
  }
  if (rest in FINAL_KEYS) {
    const final = FINAL_KEYS[rest] as string;
    if (modifier !== 1) return `\x1b[1;${modifier}${final}`;
    const functionKey = rest.startsWith('F');
    return functionKey || options.applicationCursor ? `\x1bO${final}` : `\x1b[${final}`;
  }
  if (rest in PLAIN_KEYS) {
    const plain = PLAIN_KEYS[rest] as string;
    if (rest === 'Tab' && shift && !ctrl) return `${metaPrefix}\x1b[Z`;
    if (ctrl && rest === 'Space') return `${metaPrefix}\x00`;
    if (ctrl || shift) throw unknownKey(name);
    return metaPrefix + plain;
  }
  if ([...rest].length !== 1) throw unknownKey(name);
  if (ctrl) {
    const control = controlCharacter(rest);
    if (control === undefined) throw unknownKey(name);
    return metaPrefix + control;
  }
  return metaPrefix + (shift ? rest.toUpperCase() : rest);
}

/** What Ctrl with `char` sends: `C-a` is 0x01 ... `C-z` 0x1a, `C-[` ESC, `C-?` DEL, `C-@` NUL. */
function controlCharacter(char: string): string | undefined {
  if (char === '?') return '\x7f';
  const code = char.toUpperCase().charCodeAt(0);
  return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code & 0x1f) : undefined;
}

function unknownKey(name: string): Error {
  return new Error(
    `unknown key ${JSON.stringify(name)}: a key is a name (Enter, Tab, BTab, Escape, BSpace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12) or one character, after any of C-, M-, S-; send other text with text`,
  );
}

/** Why `name` is not a key this module can send, or undefined when it is one. */
export function keyProblem(name: string): string | undefined {
  try {
    oneKey(name, {});
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
