/**
 * Wrappers: commands that run the rest of their arguments as a command (`sudo`, `env`, `nohup`,
 * `timeout`, `xargs`, `chrt`, `ip netns exec`, ...; wrapper-options.ts lists them with their
 * options) or hand a string to a shell (`bash -c`, `eval`, `su -c`, `env -S`, `sg`, `watch`,
 * `trap`, `mapfile -C`, `flock -c`, `script -c`, `compgen -C`), `find -exec`, git's global options
 * (git-options.ts), and the environment a wrapper gives its command (`env GIT_EDITOR=...`,
 * command-variables.ts). This is what no bash grammar can know: `unwrap` takes a simple command's
 * words, once the grammar has found them, and says what they run (command-layers.ts follows it
 * layer by layer).
 */
import { assignmentReason } from './bash-evaluation.js';
import { assignedCommand } from './command-variables.js';
import { unwrapGit } from './git-options.js';
import {
  basename,
  isKeyword,
  PASS_THROUGH_KEYWORDS,
  STDIN_PATH,
  shellQuote,
  type Word,
} from './shell-words.js';
import type { Unwrapped } from './unwrapped.js';
import {
  type OptionSpec,
  readOptions,
  SETARCH_NAMES,
  UNREAD_RUNNERS,
  WRAPPERS,
  wrapperSpec,
} from './wrapper-options.js';

const SHELLS = new Set([
  'bash',
  'sh',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'rbash',
  'fish',
  'csh',
  'tcsh',
  'yash',
  'posh',
]);

export function unwrap(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  if (name === 'eval')
    return { kind: 'script', script: words[1]?.text === '--' ? words.slice(2) : words.slice(1) };
  if (name === 'env') return unwrapEnv(words);
  if (SHELLS.has(name)) return unwrapShell(words);
  if (name === 'su' || name === 'runuser') return unwrapSu(words);
  if (name === 'watch') return unwrapWatch(words);
  if (name === 'find') return unwrapFind(words);
  if (name === 'source' || name === '.') return unwrapSource(words);
  if (name === 'trap') return unwrapTrap(words);
  if (name === 'mapfile' || name === 'readarray') return unwrapMapfile(words);
  if (name === 'compgen') return unwrapCompgen(words);
  if (name === 'git') return unwrapGit(words);
  if (name === 'sg') return unwrapSg(words);
  if (name === 'flock') return unwrapFlock(words);
  if (name === 'script') return unwrapScript(words);
  if (name === 'at' || name === 'batch') return unwrapAt(words);
  if (name === 'ip') return unwrapIp(words);
  if (UNREAD_RUNNERS.has(name))
    return { kind: 'unknown', reason: `${name} runs a command that this check does not read` };
  if (name === 'alias' && words.slice(1).some((word) => word.text.includes('=')))
    return { kind: 'unknown', reason: 'an alias can give a command another name' };
  if (name === 'hash' && words.slice(1).some((word) => /^-[^-]*p/.test(word.text)))
    return { kind: 'unknown', reason: 'hash -p can give a command another name' };
  if (SETARCH_NAMES.has(name)) return unwrapWrapper(name, words, 1, WRAPPERS.setarch as OptionSpec);
  const spec = wrapperSpec(name);
  if (spec === undefined) return { kind: 'none' };
  // `setarch ARCH [options]`: the architecture comes before the options.
  const from = name === 'setarch' && words[1] !== undefined && !words[1].text.startsWith('-') ? 2 : 1;
  return unwrapWrapper(name, words, from, spec);
}

/** A wrapper of wrapper-options.ts: the command after its options and operands. */
function unwrapWrapper(name: string, words: Word[], from: number, spec: OptionSpec): Unwrapped {
  const options = readOptions(name, words, from, spec);
  if ('reason' in options) return { kind: 'unknown', reason: options.reason };
  const given = (list: readonly string[] | undefined) => list?.find((option) => options.seen.has(option));
  if (given(spec.noCommand) !== undefined) return { kind: 'none' };
  const other = given(spec.runsOther);
  if (other !== undefined)
    return { kind: 'unknown', reason: `${name} ${other} runs a command that this check does not read` };
  const renamed = given(spec.renames);
  if (renamed !== undefined)
    return {
      kind: 'unknown',
      reason: `${name} ${renamed} gives the command another name, which a multi-call program such as busybox runs`,
    };
  const scripts: Word[] = [];
  for (const { option, value } of options.values) {
    const property = name === 'systemd-run' && PROPERTY_OPTIONS.includes(option);
    if (!property && !spec.environment?.includes(option)) continue;
    if (!value.literal)
      return {
        kind: 'unknown',
        reason: `${name} ${option} takes a value computed at run time: ${value.text}`,
      };
    if (property && /^\s*Exec/i.test(value.text))
      return { kind: 'unknown', reason: `systemd-run runs the command of a property: ${value.text}` };
    if (property) continue;
    const effect = environmentEffect(value);
    if (effect !== undefined && 'reason' in effect) return { kind: 'unknown', reason: effect.reason };
    if (effect !== undefined) scripts.push(effect.script);
  }
  const operands = given(spec.noOperandWith) === undefined ? (spec.operands ?? 0) : 0;
  let command = words.slice(options.start + operands);
  // Past a `--`, getopt reads no more options; before it, it takes one after the command as its own.
  if (spec.permutes && words[options.start - 1]?.text !== '--') {
    const late = command.find((word) => /^-./.test(word.text));
    if (late !== undefined)
      return { kind: 'unknown', reason: `${name} reads options after its command too: ${late.text}` };
  }
  // sudo takes `NAME=value` words (quoted or not) before the command as its environment.
  if (name === 'sudo') {
    while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(command[0]?.text ?? '')) {
      const effect = environmentEffect(command[0] as Word);
      if (effect !== undefined && 'reason' in effect) return { kind: 'unknown', reason: effect.reason };
      if (effect !== undefined) scripts.push(effect.script);
      command = command.slice(1);
    }
  }
  // `coproc NAME { ...; }`: a name only before a compound command.
  if (name === 'coproc' && command.length > 1 && isKeyword(command[1] as Word, PASS_THROUGH_KEYWORDS))
    command = command.slice(1);
  if (command.length > 0) return { kind: 'wrapper', command, scripts };
  const shell = spec.shell === true || given(spec.shell) !== undefined;
  if (shell)
    return { kind: 'unknown', reason: `${name} starts a shell that reads its commands from standard input` };
  return scripts.length > 0 ? { kind: 'wrapper', command: [], scripts } : { kind: 'none' };
}

/** systemd-run's options that give its unit a property, which may be a command of its own (`ExecStartPre=`). */
const PROPERTY_OPTIONS = ['-p', '--property', '--path-property', '--socket-property', '--timer-property'];

/**
 * What `NAME=VALUE` in a command's environment (env's, sudo's, `systemd-run -E`'s) makes it run:
 * why the line is uncertain (bash-evaluation.ts), or the command a variable holds
 * (command-variables.ts), as a script to read.
 */
function environmentEffect(word: Word): { reason: string } | { script: Word } | undefined {
  const eq = word.text.indexOf('=');
  if (eq <= 0) return undefined;
  const name = word.text.slice(0, eq);
  const value = word.text.slice(eq + 1);
  const reason = assignmentReason(name, value, word.text);
  if (reason !== undefined) return { reason };
  const held = assignedCommand(name, word.literal ? { ...word, text: value } : undefined, word.text);
  if (held === undefined || 'reason' in held) return held;
  return { script: { ...word, text: held.source } };
}

/** Whether a command runs the command its arguments name: a wrapper, env, a shell, su. */
export function runsCommands(name: string): boolean {
  return (
    wrapperSpec(name) !== undefined ||
    SETARCH_NAMES.has(name) ||
    UNREAD_RUNNERS.has(name) ||
    SHELLS.has(name) ||
    ['env', 'su', 'runuser', 'watch', 'find', 'eval', 'sg', 'flock', 'script', 'at', 'batch', 'ip'].includes(
      name,
    )
  );
}

/** The string `xargs -I R` (or `-i`, `--replace`) replaces, if any. */
export function xargsReplace(words: Word[]): string | undefined {
  for (let i = 1; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (text === '--' || !text.startsWith('-')) return undefined;
    if (text === '-I' || text === '--replace') return text === '-I' ? words[i + 1]?.text : '{}';
    const attached = /^(?:-I|-i|--replace=)(.*)$/s.exec(text);
    if (attached) return attached[1] === '' ? '{}' : attached[1];
  }
  return undefined;
}

/** env's long options that take no argument (or only an attached `=value`). */
const ENV_LONG_FLAGS = [
  'ignore-environment',
  'null',
  'block-signal',
  'default-signal',
  'ignore-signal',
  'list-signal-handling',
  'debug',
  'help',
  'version',
];

function unknownEnvOption(text: string): Unwrapped {
  return { kind: 'unknown', reason: `env has an option this check does not know: ${text}` };
}

/**
 * `env [-i] [-u NAME] [-C DIR] [-S STRING] [--] [NAME=VALUE]... COMMAND`; short options cluster
 * (`-iS`). Its getopt stops at the first operand: options come before any `NAME=VALUE`, and
 * assignments may follow `--`.
 */
function unwrapEnv(words: Word[]): Unwrapped {
  const computed: Unwrapped = { kind: 'unknown', reason: 'the arguments of env are computed at run time' };
  const scripts: Word[] = [];
  let options = true;
  let i = 1;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return computed;
    const text = word.text;
    if (options && (text === '--' || text === '-')) {
      // A lone `-` is `-i`.
      options = false;
      i++;
      continue;
    }
    if (!options || !text.startsWith('-')) {
      if (!/^[^=]+=/.test(text)) break;
      options = false;
      // Bash imports `BASH_FUNC_name%%=() { ...; }` from its environment as a function.
      if (text.startsWith('BASH_FUNC_'))
        return { kind: 'unknown', reason: 'env defines a shell function through the environment' };
      const effect = environmentEffect(word);
      if (effect !== undefined && 'reason' in effect) return { kind: 'unknown', reason: effect.reason };
      if (effect !== undefined) scripts.push(effect.script);
      i++;
      continue;
    }
    /** `-S STRING`: the string (attached, or the next word), split into the command's words. */
    let split: Word | undefined;
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const long = eq === -1 ? text.slice(2) : text.slice(2, eq);
      const withArgument = ['split-string', 'unset', 'chdir'].includes(long);
      if (!withArgument && !ENV_LONG_FLAGS.includes(long)) return unknownEnvOption(text);
      const takesNext = eq === -1 && withArgument;
      if (long === 'split-string') split = eq === -1 ? words[i + 1] : { ...word, text: text.slice(eq + 1) };
      i += takesNext ? 2 : 1;
    } else {
      let taken = 1;
      for (let j = 1; j < text.length; j++) {
        const option = text[j] as string;
        if (!'SuC'.includes(option)) {
          if (!'i0v'.includes(option)) return unknownEnvOption(text);
          continue;
        }
        const value = text.slice(j + 1);
        if (value === '') taken = 2;
        if (option === 'S') split = value === '' ? words[i + 1] : { ...word, text: value };
        break;
      }
      i += taken;
    }
    if (split !== undefined) {
      const rest = words.slice(i);
      if (!split.literal || rest.some((w) => !w.literal)) return computed;
      return {
        kind: 'script',
        script: [{ ...split, text: [split.text, ...rest.map((w) => shellQuote(w.text))].join(' ') }],
      };
    }
  }
  const command = words.slice(i);
  return command.length > 0 || scripts.length > 0 ? { kind: 'wrapper', command, scripts } : { kind: 'none' };
}

/** `bash [options] -c STRING [NAME [ARGS]]`: the string is a script; without `-c`, a script file. */
function unwrapShell(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  let command = false;
  /** `-s`, or a lone `-`: the commands come from standard input. */
  let stdin = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal) {
      // After `-c`, the string to run; before it, options or a script file bash cannot tell apart here.
      if (command) break;
      return { kind: 'unknown', reason: 'the options of a shell are computed at run time' };
    }
    const text = word.text;
    if (text === '--' || text === '-') {
      stdin ||= text === '-';
      i++;
      break;
    }
    if (text.startsWith('--')) {
      if (text === '--version' || text === '--help') return { kind: 'none' };
      if (text === '--rcfile' || text === '--init-file') i++;
      continue;
    }
    if (!/^[-+]/.test(text)) break;
    // An interactive shell expands its prompts and runs its history (`fc -s`), which no words show.
    if (text[0] === '-' && text.includes('i'))
      return {
        kind: 'unknown',
        reason: `${name} -i is interactive: its prompts and history run what this check does not read`,
      };
    if (text[0] === '-' && text.includes('c')) command = true;
    if (text[0] === '-' && text.includes('s')) stdin = true;
    if (/[oO]/.test(text)) i++;
  }
  const operand = words[i];
  if (!command) {
    // A shell with no script, or one reading /dev/stdin, runs what a pipe or here-document holds.
    if (stdin || operand === undefined || STDIN_PATH.test(operand.text))
      return { kind: 'unknown', reason: `${name} reads its commands from standard input` };
    return { kind: 'none' };
  }
  return operand === undefined ? { kind: 'none' } : { kind: 'script', script: [operand] };
}

/**
 * `su [options] -c COMMAND [user]` (also `--session-command`); `runuser -u USER [--] COMMAND...`.
 * su's getopt reads options anywhere on its line, and clustered (`su -lc 'cmd' root`).
 */
function unwrapSu(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  /** Short options that take an argument (runuser's `-u` too), which is then not an option. */
  const withValue = name === 'runuser' ? 'gGswu' : 'gGsw';
  const script = (word: Word | undefined): Unwrapped =>
    word === undefined ? { kind: 'none' } : { kind: 'script', script: [word] };
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal)
      return { kind: 'unknown', reason: `the arguments of ${name} are computed at run time` };
    const text = word.text;
    const attached = /^--(?:session-)?command=(.*)$/s.exec(text);
    if (attached) return script({ ...word, text: attached[1] as string });
    if (text === '--command' || text === '--session-command') return script(words[i + 1]);
    if (/^--(?:group|supp-group|shell|whitelist-environment|user)$/.test(text)) i++;
    if (!/^-[^-]/.test(text)) continue;
    for (let j = 1; j < text.length; j++) {
      const letter = text[j] as string;
      const rest = text.slice(j + 1);
      if (letter === 'c') return script(rest === '' ? words[i + 1] : { ...word, text: rest });
      if (!withValue.includes(letter)) continue;
      if (rest === '') i++;
      break;
    }
  }
  if (name === 'runuser' && words.some((word) => /^(?:-u|--user(?:=|$))/.test(word.text))) {
    const options = readOptions(name, words, 1, RUNUSER);
    if ('reason' in options) return { kind: 'unknown', reason: options.reason };
    const command = words.slice(options.start);
    return command.length > 0 ? { kind: 'wrapper', command } : { kind: 'none' };
  }
  if (words.slice(1).some((word) => /^(?:-h|--help|-V|--version)$/.test(word.text))) return { kind: 'none' };
  // Without a command, su (and runuser without -u) starts a shell as the user.
  return { kind: 'unknown', reason: `${name} starts a shell that reads its commands from standard input` };
}

/** runuser's options (util-linux), for `runuser -u USER [options] COMMAND...`. */
const RUNUSER: OptionSpec = {
  short: 'ugGsw',
  flags: 'mplfPhV',
  long: ['user', 'group', 'supp-group', 'shell', 'whitelist-environment'],
  longFlags: ['preserve-environment', 'login', 'fast', 'pty', 'help', 'version'],
};

/** `source FILE` / `. FILE`: a file is not read here, but a computed name or standard input is refused. */
function unwrapSource(words: Word[]): Unwrapped {
  const file = words[1]?.text === '--' ? words[2] : words[1];
  if (file === undefined) return { kind: 'none' };
  if (!file.literal) return { kind: 'unknown', reason: 'source reads a file named at run time' };
  if (STDIN_PATH.test(file.text) && file.text !== '-')
    return { kind: 'unknown', reason: 'source reads its commands from standard input' };
  return { kind: 'none' };
}

/** `trap [--] ACTION SIGNAL...`: the action is a string bash runs later. */
function unwrapTrap(words: Word[]): Unwrapped {
  const start = words[1]?.text === '--' ? 2 : 1;
  const action = words[start];
  // One operand is a signal to reset; `-` resets too; `-l` and `-p` only print.
  if (action === undefined || words.length - start < 2 || /^-[lpP]*$/.test(action.text))
    return { kind: 'none' };
  return { kind: 'script', script: [action] };
}

/** `mapfile -C CALLBACK` (or `readarray`): a string bash runs for every few lines read. */
function unwrapMapfile(words: Word[]): Unwrapped {
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal) return { kind: 'unknown', reason: 'the options of mapfile are computed at run time' };
    const text = word.text;
    if (text === '--' || !text.startsWith('-')) break;
    for (let j = 1; j < text.length; j++) {
      const option = text[j] as string;
      if (!'CdunOcs'.includes(option)) continue;
      const value = text.slice(j + 1);
      const argument = value === '' ? words[++i] : { ...word, text: value };
      if (option === 'C')
        return argument === undefined ? { kind: 'none' } : { kind: 'script', script: [argument] };
      break;
    }
  }
  return { kind: 'none' };
}

/** `watch [options] COMMAND...`: runs `sh -c` with the words joined by spaces. */
function unwrapWatch(words: Word[]): Unwrapped {
  const options = readOptions('watch', words, 1, WATCH);
  if ('reason' in options) return { kind: 'unknown', reason: options.reason };
  const script = words.slice(options.start);
  return script.length > 0 ? { kind: 'script', script } : { kind: 'none' };
}

/** watch's options (procps-ng). */
const WATCH: OptionSpec = {
  short: 'nq',
  flags: 'bcegptwxhv',
  optional: 'd',
  long: ['interval', 'equexit'],
  longFlags: [
    'differences',
    'errexit',
    'beep',
    'color',
    'chgexit',
    'precise',
    'no-title',
    'no-wrap',
    'exec',
    'help',
    'version',
  ],
};

/** `find ... -exec COMMAND ;` (and `-execdir`, `-ok`, `-okdir`, ending in `;` or `+`). */
function unwrapFind(words: Word[]): Unwrapped {
  const commands: Word[][] = [];
  for (let i = 1; i < words.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test((words[i] as Word).text)) continue;
    const command: Word[] = [];
    for (i++; i < words.length && !/^[;+]$/.test((words[i] as Word).text); i++)
      command.push(words[i] as Word);
    if (command.length > 0) commands.push(command);
  }
  return commands.length > 0 ? { kind: 'commands', commands } : { kind: 'none' };
}

/** `compgen -C COMMAND` runs a command; `compgen -W WORDLIST` expands its words, running their substitutions. */
function unwrapCompgen(words: Word[]): Unwrapped {
  const scripts: Word[] = [];
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal) return { kind: 'unknown', reason: 'the options of compgen are computed at run time' };
    if (word.text === '--' || !word.text.startsWith('-')) break;
    for (let j = 1; j < word.text.length; j++) {
      const option = word.text[j] as string;
      if (!'AGWFCXPSo'.includes(option)) continue;
      const attached = word.text.slice(j + 1);
      const argument = attached === '' ? words[++i] : { ...word, text: attached };
      if (argument !== undefined && option === 'C') scripts.push(argument);
      if (argument !== undefined && option === 'W' && (!argument.literal || /[$`]/.test(argument.text)))
        return {
          kind: 'unknown',
          reason: `compgen -W expands its word list, running what it holds: ${argument.text}`,
        };
      break;
    }
  }
  return scripts.length > 0 ? { kind: 'wrapper', command: [], scripts } : { kind: 'none' };
}

/**
 * `sg [-] GROUP [-c] COMMAND`: shadow's sg hands the one word COMMAND to `/bin/sh -c` (the words
 * after it are the shell's `$0`, `$1`, ...); with no command, it starts a shell.
 */
function unwrapSg(words: Word[]): Unwrapped {
  let i = words[1]?.text === '-' ? 2 : 1;
  if (words.slice(1, i + 1).some((word) => !word.literal))
    return { kind: 'unknown', reason: 'the arguments of sg are computed at run time' };
  i++;
  if (words[i]?.text === '-c') i++;
  const command = words[i];
  if (command !== undefined) return { kind: 'script', script: [command] };
  return words.length > 1
    ? { kind: 'unknown', reason: 'sg starts a shell that reads its commands from standard input' }
    : { kind: 'none' };
}

/**
 * `at` and `batch` read the commands they schedule from standard input or a file (`-f`); only
 * their listing, removing and printing forms run nothing.
 */
function unwrapAt(words: Word[]): Unwrapped {
  if (words.slice(1).some((word) => /^-[lrdcV]$/.test(word.text))) return { kind: 'none' };
  const name = basename((words[0] as Word).text);
  return { kind: 'unknown', reason: `${name} runs commands it reads from standard input or a file` };
}

/**
 * `ip netns exec NAME COMMAND...`, `ip vrf exec NAME COMMAND...` and `ip -all netns exec
 * COMMAND...` run a command. iproute2 takes any prefix of an option or an object (`ip n`, `-b`), so
 * only these forms, written out, are read: any other line with a word that could be `exec` (a
 * prefix of it) is uncertain, and so is `-batch`, which runs ip commands from a file or standard
 * input (`netns exec` among them).
 */
function unwrapIp(words: Word[]): Unwrapped {
  if (words.some((word) => !word.literal))
    return { kind: 'unknown', reason: 'the arguments of ip are computed at run time' };
  const texts = words.slice(1).map((word) => word.text);
  const all = texts[0] === '-all' ? 1 : 0;
  const [object, action] = texts.slice(all);
  if (action === 'exec' && (object === 'netns' || (object === 'vrf' && all === 0))) {
    // The command is the fifth word either way: after `-all netns exec` (every namespace), or
    // after `netns exec NAME`.
    const command = words.slice(4);
    return command.length > 0 ? { kind: 'wrapper', command } : { kind: 'none' };
  }
  if (texts.some((text) => /^--?b(?:a(?:t(?:ch?)?)?)?$/.test(text)))
    return { kind: 'unknown', reason: 'ip -batch runs the ip commands a file holds' };
  if (texts.some((text) => text !== '' && 'exec'.startsWith(text)))
    return { kind: 'unknown', reason: 'ip runs a command that this check does not read' };
  return { kind: 'none' };
}

/** flock's options (util-linux): it stops at its first operand, the lock's file or descriptor. */
const FLOCK: OptionSpec = {
  short: 'wE',
  flags: 'sexnoFuhV',
  long: ['timeout', 'wait', 'conflict-exit-code'],
  longFlags: [
    'shared',
    'exclusive',
    'unlock',
    'nonblock',
    'nb',
    'close',
    'no-fork',
    'verbose',
    'help',
    'version',
  ],
};

/** `flock [options] FILE COMMAND...`, `flock [options] FILE -c STRING` (a shell runs it), or `flock FD`. */
function unwrapFlock(words: Word[]): Unwrapped {
  const options = readOptions('flock', words, 1, FLOCK);
  if ('reason' in options) return { kind: 'unknown', reason: options.reason };
  const after = words.slice(options.start + 1);
  if (after[0]?.text === '-c' || after[0]?.text === '--command')
    return after[1] === undefined ? { kind: 'none' } : { kind: 'script', script: [after[1]] };
  return after.length > 0 ? { kind: 'wrapper', command: after } : { kind: 'none' };
}

/** script's options that take an argument (util-linux; it reads options anywhere on its line). */
const SCRIPT_ARGUMENTS = 'cEIOBTmo';

/** `script -c STRING [file]`: a shell runs the string; without `-c`, it starts a shell reading standard input. */
function unwrapScript(words: Word[]): Unwrapped {
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal) return { kind: 'unknown', reason: 'the options of script are computed at run time' };
    const text = word.text;
    if (text === '--') break;
    const long = /^--command(?:=(.*))?$/s.exec(text);
    if (long) {
      const script = long[1] !== undefined ? { ...word, text: long[1] } : words[i + 1];
      return script === undefined ? { kind: 'none' } : { kind: 'script', script: [script] };
    }
    if (!/^-[^-]/.test(text)) continue;
    for (let j = 1; j < text.length; j++) {
      const option = text[j] as string;
      if (!SCRIPT_ARGUMENTS.includes(option)) continue;
      const attached = text.slice(j + 1);
      const argument = attached === '' ? words[++i] : { ...word, text: attached };
      if (option === 'c')
        return argument === undefined ? { kind: 'none' } : { kind: 'script', script: [argument] };
      break;
    }
  }
  return { kind: 'unknown', reason: 'script starts a shell that reads its commands from standard input' };
}
