/**
 * What bash evaluates beyond the words a command shows, where a string can hide a command (checked
 * on bash 5.2): arithmetic evaluates the value of every variable it reads as an expression again,
 * and an array subscript there runs its `$( )` (`x='a[$(rm y)]'; echo $((x))` runs rm); a builtin
 * given a variable's name evaluates the name's subscript the same way (`read 'a[$(rm y)]'`); a
 * prompt string's expansion runs its `$( )` (`${x@P}`, PS4 when bash traces, PS1 in an interactive
 * bash); a starting shell expands the name of its start-up file (`BASH_ENV`, `ENV`); and `fc` runs a
 * command of the history list again, changed. Each function says why its text makes a line
 * uncertain, or gives undefined where bash evaluates nothing that could run a command. The walk of
 * the grammar's tree (split-commands.ts) asks about arithmetic, subscripts, expansions and
 * assignments; command-layers.ts asks about each simple command's words (`builtinEvaluations`).
 */
import { assignedCommand, commandVariableReason, isCommandVariable } from './command-variables.js';
import { gitEnvironmentReason } from './git-options.js';
import { excerpt, STDIN_PATH, type Word } from './shell-words.js';

/**
 * What arithmetic may hold without reading a value set elsewhere: numbers (`0x1f`, `16#ff`), the
 * parameters that always hold a number (`$#`, `$?`, `$$`, `$!`, `${#name}`), and the opening of a
 * nested `$(( ))` or `$[ ]` (its own text is checked where it stands).
 */
const ARITHMETIC_CONSTANTS =
  /\$\{#[A-Za-z_][A-Za-z0-9_]*(?:\[(?:[@*]|\d+)\])?\}|\$\{[#?$!]\}|\$[#?$!]|\$\(\(|\$\[|\d+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|\d+/g;

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

/** The prompts bash expands (running their `$( )`), and when: a value with `$` or a backquote may run a command. */
const PROMPTS = new Map<string, string>([
  ['PS0', 'by an interactive bash'],
  ['PS1', 'by an interactive bash'],
  ['PS2', 'by an interactive bash'],
  ['PS4', 'each time bash traces a command'],
]);

/**
 * The variables that name a shell's start-up file, and which shell reads them (bash 5.2's
 * `run_startup_files`; dash reads ENV as bash in POSIX mode does). The shell expands the value (a
 * `$( )` in it runs) and runs the file it names.
 */
const START_UP_FILES = new Map<string, string>([
  ['BASH_ENV', 'a non-interactive bash'],
  ['ENV', 'an interactive sh'],
]);

/**
 * Why assigning `value` (its text as written, quotes and all; undefined when it is known only at
 * run time: read from input, appended to) to the variable `name` may run a command: a prompt or a
 * start-up file's name holding an expansion, a start-up file read from standard input, a command
 * variable (command-variables.ts) whose value cannot be read, or git's configuration given through
 * the environment (git-options.ts). A command variable's value, when known, is read as a script by
 * the caller. Judged where the assignment is made, exported or not: `export`, `set -a` or a later
 * program may hand it to the shell that reads it. `shown` is the assignment as a reason quotes it.
 */
export function assignmentReason(
  name: string,
  value: string | undefined,
  shown = `${name}=${value ?? '…'}`,
): string | undefined {
  const prompt = PROMPTS.get(name);
  if (prompt !== undefined && (value === undefined || /[$`]/.test(value)))
    return `${name} is expanded as a prompt ${prompt}: ${excerpt(shown)}`;
  const shell = START_UP_FILES.get(name);
  if (
    shell !== undefined &&
    (value === undefined || /[$`]/.test(value) || STDIN_PATH.test(value.replace(/["'\\]/g, '')))
  )
    return `${name} is expanded, and the file it names run, when ${shell} starts: ${excerpt(shown)}`;
  if (value === undefined && isCommandVariable(name)) return commandVariableReason(name, shown);
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
  if (NAME.test(name.text)) return undefined;
  const index = SUBSCRIPTED_NAME.exec(name.text)?.[1];
  if (index === undefined || subscriptReason(index, name.text) === undefined) return undefined;
  return `${command} takes a variable name whose subscript bash evaluates: ${excerpt(name.text)}`;
}

/** `variableNameReason` for a builtin that assigns the variable a value read at run time (`read NAME`). */
function assignedNameReason(command: string, name: Word): string | undefined {
  return (
    variableNameReason(command, name) ??
    (NAME.test(name.text) ? assignmentReason(name.text, undefined) : undefined)
  );
}

/** What bash evaluates for a simple command: why it may run a command, and the scripts it hands on. */
export interface Evaluations {
  reasons: string[];
  /** Commands another program runs later (a `declare -x GIT_EDITOR='...'`), read as scripts. */
  scripts: string[];
}

/**
 * Why a simple command's words (quotes removed) make bash evaluate what may run a command: the
 * builtins that take variable names (`test -v`, `printf -v`, `read`, `wait -p`, `unset`, `declare`,
 * `typeset`, `local`), `let`, `declare -i`/`-n`/`-a`, `set -H` (history expansion) and `fc`; and the
 * commands a declaration gives a command variable. `export`, `readonly`, `getopts` and `mapfile`
 * refuse a subscripted name (bash 5.2: "not a valid identifier"), so only the assignments of
 * `export`, `readonly` and `mapfile` are checked.
 */
export function builtinEvaluations(words: Word[]): Evaluations {
  const head = words[0];
  if (head === undefined || !head.literal) return { reasons: [], scripts: [] };
  const args = words.slice(1);
  switch (head.text) {
    case 'declare':
    case 'typeset':
    case 'local':
      return declaration(head.text, args, true);
    case 'export':
    case 'readonly':
      return declaration(head.text, args, false);
    default:
      return { reasons: builtinReasons(head.text, args), scripts: [] };
  }
}

function builtinReasons(command: string, args: Word[]): string[] {
  switch (command) {
    case 'test':
    case '[':
      return testNames(command, command === '[' && args.at(-1)?.text === ']' ? args.slice(0, -1) : args);
    case 'printf':
      return optionNames('printf', args, { names: 'v', flags: '' }, true).reasons;
    case 'read': {
      const parsed = optionNames('read', args, { names: 'a', values: 'dinNptu', flags: 'ers' }, true);
      return [
        ...parsed.reasons,
        ...parsed.operands.flatMap((word) => assignedNameReason('read', word) ?? []),
      ];
    }
    case 'mapfile':
    case 'readarray': {
      const parsed = optionNames(command, args, { values: 'dnOsucC', flags: 't' });
      const name = parsed.operands[0];
      // Bash refuses a subscripted name here ("not a valid identifier") and evaluates nothing.
      if (name === undefined || (name.literal && SUBSCRIPTED_NAME.test(name.text))) return [];
      return found(assignedNameReason(command, name));
    }
    case 'wait':
      return optionNames('wait', args, { names: 'p', flags: 'fn' }).reasons;
    case 'unset': {
      const parsed = optionNames('unset', args, { flags: 'fvn' });
      return parsed.letters.includes('f')
        ? parsed.reasons
        : [...parsed.reasons, ...parsed.operands.flatMap((word) => variableNameReason('unset', word) ?? [])];
    }
    case 'let':
      return args.flatMap((word) => (word.text === '--' ? [] : (arithmeticReason(word.text) ?? [])));
    case 'set':
    case 'shopt':
      return historyExpansion(command, args);
    case 'fc':
      return historyCommand(args);
    default:
      return [];
  }
}

/**
 * `fc` runs commands of the history list again: edited by `$FCEDIT` (or `-e EDITOR`), or changed
 * (`fc -s echo=rm` runs the last `echo` line as `rm`), which the line does not show; `fc -l` only
 * lists them. With `set -o history` this works in any bash, not only an interactive one.
 */
function historyCommand(args: Word[]): string[] {
  for (let i = 0; i < args.length; i++) {
    const text = (args[i] as Word).text;
    if (!/^-[^-]/.test(text) || /^-\d+$/.test(text)) break;
    for (let j = 1; j < text.length; j++) {
      if (text[j] === 'l') return [];
      // `-e EDITOR`, or `-eEDITOR`: the rest of the word, or the next one, is the editor.
      if (text[j] !== 'e') continue;
      if (j === text.length - 1) i++;
      break;
    }
  }
  return [
    `fc runs a command of the history list again: ${excerpt(['fc', ...args.map((word) => word.text)].join(' '))}`,
  ];
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
 * the letters given, the names their options take (checked, and, where it `assigns`, as names that
 * get a value known only at run time), and the operands after them.
 */
function optionNames(
  command: string,
  args: Word[],
  spec: BuiltinOptions,
  assigns = false,
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
        const check = assigns ? assignedNameReason : variableNameReason;
        const reason = check(`${command} -${letter}`, argument);
        if (reason) reasons.push(reason);
      }
      break;
    }
  }
  return { letters, reasons, operands: args.slice(i) };
}

/**
 * `declare`/`typeset`/`local` (`evaluates`) and `export`/`readonly`: each `NAME[=VALUE]`. The
 * first three evaluate a name's subscript, the keys of a compound value (`a=([k]=v)`), every later
 * assignment of a `-i` variable as arithmetic, and a `-n` variable's value as a name at each use.
 * All five assign: the value (`assignmentReason`, and a command variable's command), and a name
 * given only at run time (`export "$n=..."`).
 */
function declaration(command: string, args: Word[], evaluates: boolean): Evaluations {
  const reasons: string[] = [];
  const scripts: string[] = [];
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
    } else if (assignment !== null && !nameWord.literal) {
      reasons.push(`${command} assigns a variable named at run time: ${excerpt(word.text)}`);
    }
    if (value === undefined) {
      // `declare -n r`: r names whichever variable its next assignment gives (`r=PS4`).
      if (evaluates && letters.includes('n'))
        reasons.push(
          `${command} -n without a target names the variable it is assigned next: ${excerpt(name)}`,
        );
      continue;
    }
    const base = name.replace(/\[.*$/s, '');
    const assigned = assignmentReason(base, assignment?.[2] === '+=' ? undefined : value, word.text);
    if (assigned) reasons.push(assigned);
    // A command variable's value is read here unless the walk reads it where it stands (`asWritten`).
    if (isCommandVariable(base) && !word.asWritten) {
      const known = word.literal && base === name && assignment?.[2] === '=';
      const held = assignedCommand(base, known ? { ...word, text: value } : undefined, word.text);
      if (held !== undefined && 'reason' in held) reasons.push(held.reason);
      else if (held !== undefined) scripts.push(held.source);
    }
    if (!evaluates) continue;
    // The value as bash reads it, when a tree's word kept its quotes.
    const unquoted = word.literal ? value : value.replace(/^(['"])(.*)\1$/s, '$2');
    if (letters.includes('n') && !NAME.test(unquoted))
      reasons.push(`${command} -n names a variable bash evaluates at each use: ${excerpt(word.text)}`);
    else if (letters.includes('n') && assignmentReason(unquoted, undefined) !== undefined)
      reasons.push(
        `${command} -n gives ${unquoted} another name, under which its assignments are not checked: ${excerpt(word.text)}`,
      );
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
  return { reasons, scripts };
}

/** A reason as a list: empty for none. */
export function found(reason: string | undefined): string[] {
  return reason === undefined ? [] : [reason];
}
