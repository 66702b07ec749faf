/**
 * What bash evaluates beyond the words a command shows, where a string can hide a command (checked
 * on bash 5.2): arithmetic evaluates the value of every variable it reads as an expression again,
 * and an array subscript there runs its `$( )` (`x='a[$(rm y)]'; echo $((x))` runs rm); a builtin
 * given a variable's name evaluates the name's subscript the same way (`read 'a[$(rm y)]'`); and a
 * prompt string's expansion runs its `$( )` (`${x@P}`, and PS4 when bash traces). Each function says
 * why its text makes a line uncertain, or gives undefined where bash evaluates nothing that could
 * run a command. The walk of the grammar's tree (split-commands.ts) asks about arithmetic, subscripts
 * and expansions; command-layers.ts asks about each simple command's words (`builtinEvaluations`).
 */
import { gitEnvironmentReason } from './git-options.js';
import type { Word } from './shell-words.js';

/**
 * What arithmetic may hold without reading a value set elsewhere: numbers (`0x1f`, `16#ff`), the
 * parameters that always hold a number (`$#`, `$?`, `$$`, `$!`, `${#name}`), and the opening of a
 * nested `$(( ))` or `$[ ]` (its own text is checked where it stands).
 */
const ARITHMETIC_CONSTANTS =
  /\$\{#[A-Za-z_][A-Za-z0-9_]*(?:\[(?:[@*]|\d+)\])?\}|\$\{[#?$!]\}|\$[#?$!]|\$\(\(|\$\[|\d+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|\d+/g;

/** Longest piece of a command quoted in a reason. */
const SHOWN_CHARS = 60;

/**
 * Why bash's arithmetic on `expression` may run a command: it reads a variable or an expansion,
 * whose value bash evaluates as an expression in turn. Numbers and operators alone run nothing.
 */
export function arithmeticReason(expression: string, shown = expression): string | undefined {
  if (!/[A-Za-z_$`]/.test(expression.replace(ARITHMETIC_CONSTANTS, ' '))) return undefined;
  return `arithmetic on a value known only at run time: ${excerpt(shown)}`;
}

/** Why a subscript (the text between `[` and `]`) may run a command: `@` and `*` are no arithmetic. */
export function subscriptReason(index: string, shown: string): string | undefined {
  return index === '@' || index === '*' ? undefined : arithmeticReason(index, shown);
}

/** The variable a command can run through: bash expands PS4 as a prompt each time it traces a command. */
const PROMPT_VARIABLE = 'PS4';

/**
 * Why assigning `value` (its text as written, quotes and all; undefined when it comes from input)
 * to the variable `name` may run a command: a PS4 holding an expansion, or git's configuration
 * given through the environment (git-options.ts).
 */
export function assignmentReason(name: string, value: string | undefined): string | undefined {
  if (name === PROMPT_VARIABLE && (value === undefined || /[$`]/.test(value)))
    return `PS4 is expanded as a prompt each time bash traces a command: ${excerpt(`${name}=${value ?? '…'}`)}`;
  return gitEnvironmentReason(name, value);
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SUBSCRIPTED_NAME = /^[A-Za-z_][A-Za-z0-9_]*\[(.*)\]$/s;

/**
 * Why the variable name `name`, which the builtin `command` assigns or tests, may run a command:
 * a name computed at run time, or a subscript bash evaluates as arithmetic. A name that is neither
 * an identifier nor a subscripted one is refused by bash, which then evaluates nothing.
 */
export function variableNameReason(command: string, name: Word): string | undefined {
  if (!name.literal || (/[$`]/.test(name.text) && !SUBSCRIPTED_NAME.test(name.text)))
    return `${command} takes a variable name computed at run time: ${excerpt(name.text)}`;
  if (NAME.test(name.text)) return assignmentReason(name.text, undefined);
  const index = SUBSCRIPTED_NAME.exec(name.text)?.[1];
  if (index === undefined || subscriptReason(index, name.text) === undefined) return undefined;
  return `${command} takes a variable name whose subscript bash evaluates: ${excerpt(name.text)}`;
}

/**
 * Why a simple command's words (quotes removed) make bash evaluate what may run a command: the
 * builtins that take variable names (`test -v`, `printf -v`, `read`, `wait -p`, `unset`, `declare`,
 * `typeset`, `local`), `let`, `declare -i`/`-n`/`-a`, and `set -H` (history expansion). `export`,
 * `readonly`, `getopts` and `mapfile` refuse a subscripted name (bash 5.2: "not a valid
 * identifier"), so only the assignments of the first two are checked.
 */
export function builtinEvaluations(words: Word[]): string[] {
  const head = words[0];
  if (head === undefined || !head.literal) return [];
  const args = words.slice(1);
  switch (head.text) {
    case 'test':
    case '[':
      return testNames(head.text, head.text === '[' && args.at(-1)?.text === ']' ? args.slice(0, -1) : args);
    case 'printf':
      return optionNames('printf', args, { names: 'v', flags: '' }).reasons;
    case 'read': {
      const parsed = optionNames('read', args, { names: 'a', values: 'dinNptu', flags: 'ers' });
      return [...parsed.reasons, ...names('read', parsed.operands)];
    }
    case 'wait':
      return optionNames('wait', args, { names: 'p', flags: 'fn' }).reasons;
    case 'unset': {
      const parsed = optionNames('unset', args, { flags: 'fvn' });
      return parsed.letters.includes('f')
        ? parsed.reasons
        : [...parsed.reasons, ...names('unset', parsed.operands)];
    }
    case 'declare':
    case 'typeset':
    case 'local':
      return declaration(head.text, args, true);
    case 'export':
    case 'readonly':
      return declaration(head.text, args, false);
    case 'let':
      return args.flatMap((word) => (word.text === '--' ? [] : (arithmeticReason(word.text) ?? [])));
    case 'set':
    case 'shopt':
      return historyExpansion(head.text, args);
    default:
      return [];
  }
}

/**
 * `set -H`, `set -o histexpand`, `shopt -s -o histexpand`: with a history list (`set -o history`),
 * a later line's `!!` or `!rm` runs an earlier command again, which that line does not show.
 */
function historyExpansion(command: string, args: Word[]): string[] {
  const turnsOn =
    command === 'set'
      ? args.some(
          (word, i) =>
            /^-[A-Za-z]*H/.test(word.text) || (word.text === '-o' && args[i + 1]?.text === 'histexpand'),
        )
      : args.some((word) => /^-[A-Za-z]*s/.test(word.text)) &&
        args.some((word) => /^-[A-Za-z]*o/.test(word.text)) &&
        args.some((word) => word.text === 'histexpand');
  if (!turnsOn) return [];
  return [
    `history expansion can run a command the line does not show: ${excerpt([command, ...args.map((word) => word.text)].join(' '))}`,
  ];
}

/** `test -v NAME` (and `[`): the word after `-v` is a name; a subscripted literal anywhere may be one. */
function testNames(command: string, args: Word[]): string[] {
  return args.flatMap((word, i) => {
    const named = args[i - 1]?.text === '-v' || (word.literal && SUBSCRIPTED_NAME.test(word.text));
    return (named && variableNameReason(`${command} -v`, word)) || [];
  });
}

interface BuiltinOptions {
  /** Options whose argument is a variable name. */
  names?: string;
  /** Options whose argument is another value. */
  values?: string;
  flags: string;
}

/**
 * A builtin's leading options, read as bash's builtins read them (`-rp PROMPT`, `-vNAME`, `--`):
 * the letters given, the names their options take (checked), and the operands after them.
 */
function optionNames(
  command: string,
  args: Word[],
  spec: BuiltinOptions,
): { letters: string; reasons: string[]; operands: Word[] } {
  const reasons: string[] = [];
  let letters = '';
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i] as Word;
    if (!word.literal) break;
    if (word.text === '--') {
      i++;
      break;
    }
    if (!/^-./.test(word.text)) break;
    for (let j = 1; j < word.text.length; j++) {
      const letter = word.text[j] as string;
      letters += letter;
      const takesName = spec.names?.includes(letter) ?? false;
      if (!takesName && !spec.values?.includes(letter)) continue;
      const attached = word.text.slice(j + 1);
      const argument = attached === '' ? args[++i] : { ...word, text: attached };
      if (takesName && argument !== undefined) {
        const reason = variableNameReason(`${command} -${letter}`, argument);
        if (reason) reasons.push(reason);
      }
      break;
    }
  }
  return { letters, reasons, operands: args.slice(i) };
}

function names(command: string, operands: Word[]): string[] {
  return operands.flatMap((word) => variableNameReason(command, word) ?? []);
}

/**
 * `declare`/`typeset`/`local` (`evaluates`) and `export`/`readonly`: each `NAME[=VALUE]`. The
 * first three evaluate a name's subscript, the keys of a compound value (`a=([k]=v)`), every later
 * assignment of a `-i` variable as arithmetic, and a `-n` variable's value as a name at each use.
 */
function declaration(command: string, args: Word[], evaluates: boolean): string[] {
  const reasons: string[] = [];
  let letters = '';
  let operands = false;
  for (const word of args) {
    if (!operands && word.literal && /^[-+]./.test(word.text)) {
      if (word.text === '--') operands = true;
      else if (word.text.startsWith('-')) letters += word.text.slice(1);
      continue;
    }
    operands = true;
    const assignment = /^([^=]*?)(\+?=)(.*)$/s.exec(word.text);
    const name = assignment ? (assignment[1] as string) : word.text;
    const value = assignment ? (assignment[3] as string) : undefined;
    const nameWord: Word = { ...word, literal: word.literal || (assignment !== null && !/[$`]/.test(name)) };
    if (evaluates && !/[fFp]/.test(letters)) {
      const reason = variableNameReason(command, { ...nameWord, text: name });
      if (reason) reasons.push(reason);
    }
    if (value === undefined) continue;
    const assigned = assignmentReason(name.replace(/\[.*$/s, ''), value);
    if (assigned) reasons.push(assigned);
    if (!evaluates) continue;
    // The value as bash reads it, when a tree's word kept its quotes.
    const unquoted = word.literal ? value : value.replace(/^(['"])(.*)\1$/s, '$2');
    if (letters.includes('n') && !NAME.test(unquoted))
      reasons.push(`${command} -n names a variable bash evaluates at each use: ${excerpt(word.text)}`);
    // With -a or -A, a quoted or computed value that is `( ... )` is parsed and expanded once more
    // (`declare -a a="$v"`); an unquoted one is an array in the tree, which the walk reads.
    const parsedAgain = word.literal ? value.startsWith('(') : !value.startsWith('(');
    if (!/[aA]/.test(letters) || !parsedAgain) continue;
    if (/[$`]/.test(unquoted)) reasons.push(`${command} expands an array value again: ${excerpt(word.text)}`);
    if (letters.includes('A')) continue;
    for (const key of unquoted.matchAll(/\[([^\]]*)\]\+?=[^\s)]*/g)) {
      const reason = subscriptReason(key[1] as string, key[0]);
      if (reason) reasons.push(reason);
    }
  }
  if (evaluates && letters.includes('i'))
    reasons.push(
      `${command} -i makes each later assignment arithmetic: ${excerpt([command, ...args.map((w) => w.text)].join(' '))}`,
    );
  return reasons;
}

/** `text` on one line, cut to `SHOWN_CHARS`. */
export function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS - 1)}…` : line;
}
