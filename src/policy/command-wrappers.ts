/**
 * Wrappers: commands that run the rest of their arguments as a command (`sudo`, `env`, `nohup`,
 * `timeout`, `xargs`, ...) or hand a string to a shell (`bash -c`, `eval`, `su -c`, `env -S`,
 * `watch`, `trap`, `mapfile -C`), and `find -exec`. This is what no bash grammar can know:
 * `unwrap` takes a simple command's words, once the grammar has found them, and says what they run
 * (command-layers.ts follows it layer by layer).
 */
import { basename, isKeyword, PASS_THROUGH_KEYWORDS, shellQuote, type Word } from './shell-words.js';

export type Unwrapped =
  | { kind: 'none' }
  | { kind: 'wrapper'; command: Word[] }
  /** Words bash joins with spaces and runs as a script. */
  | { kind: 'script'; script: Word[] }
  | { kind: 'commands'; commands: Word[][] }
  | { kind: 'unknown'; reason: string };

interface OptionSpec {
  /** Short options that take an argument. */
  short: string;
  /** Long options that take an argument (unless given as `--name=value`). */
  long?: string[];
  /** `nice -10`: a number as an option. */
  numeric?: boolean;
  /** Operands before the command (`timeout DURATION`). */
  operands?: number;
}

const WRAPPERS: Record<string, OptionSpec> = {
  sudo: {
    short: 'ughpCDrtTUR',
    long: [
      'chroot',
      'user',
      'group',
      'host',
      'prompt',
      'close-from',
      'chdir',
      'role',
      'type',
      'command-timeout',
      'other-user',
    ],
  },
  doas: { short: 'uC' },
  nohup: { short: '' },
  time: { short: 'fo', long: ['format', 'output'] },
  nice: { short: 'n', long: ['adjustment'], numeric: true },
  ionice: { short: 'cn', long: ['class', 'classdata'] },
  timeout: { short: 'sk', long: ['signal', 'kill-after'], operands: 1 },
  stdbuf: { short: 'ioe', long: ['input', 'output', 'error'] },
  command: { short: '' },
  pkexec: { short: '', long: ['user'] },
  chroot: { short: '', long: ['userspec', 'groups'], operands: 1 },
  toybox: { short: '' },
  builtin: { short: '' },
  exec: { short: 'a' },
  coproc: { short: '' },
  setsid: { short: '' },
  unbuffer: { short: '' },
  busybox: { short: '' },
  chronic: { short: '' },
  xargs: {
    short: 'adEILnPs',
    long: [
      'arg-file',
      'delimiter',
      'eof',
      'replace',
      'max-lines',
      'max-args',
      'max-procs',
      'max-chars',
      'process-slot-var',
    ],
  },
};

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

/** A path a shell or `source` reads its standard input through. */
const STDIN_PATH = /^(?:-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/[^/]+\/fd\/\d+)$/;

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
  if (name === 'alias' && words.slice(1).some((word) => word.text.includes('=')))
    return { kind: 'unknown', reason: 'an alias can give a command another name' };
  if (name === 'hash' && words.slice(1).some((word) => /^-[^-]*p/.test(word.text)))
    return { kind: 'unknown', reason: 'hash -p can give a command another name' };
  const spec = WRAPPERS[name];
  if (spec === undefined) return { kind: 'none' };
  const start = skipOptions(words, 1, spec);
  if (start === undefined)
    return { kind: 'unknown', reason: `the options of ${name} are computed at run time` };
  let command = words.slice(start + (spec.operands ?? 0));
  // sudo takes `NAME=value` words (quoted or not) before the command as its environment.
  if (name === 'sudo')
    while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(command[0]?.text ?? '')) command = command.slice(1);
  // `coproc NAME { ...; }`: a name only before a compound command.
  if (name === 'coproc' && command.length > 1 && isKeyword(command[1] as Word, PASS_THROUGH_KEYWORDS))
    command = command.slice(1);
  return command.length > 0 ? { kind: 'wrapper', command } : { kind: 'none' };
}

/** Whether a command runs the command its arguments name: a wrapper, env, a shell, su. */
export function runsCommands(name: string): boolean {
  return (
    WRAPPERS[name] !== undefined ||
    SHELLS.has(name) ||
    ['env', 'su', 'runuser', 'watch', 'find', 'eval'].includes(name)
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

/** The index of the first word after `from` that is not an option, or undefined if one is computed. */
function skipOptions(words: Word[], from: number, spec: OptionSpec): number | undefined {
  let i = from;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return undefined;
    const text = word.text;
    if (text === '--') return i + 1;
    if (!text.startsWith('-') || text === '-') return i;
    if (spec.numeric && /^-\d+$/.test(text)) {
      i++;
    } else if (text.startsWith('--')) {
      const name = text.slice(2);
      i += !name.includes('=') && spec.long?.includes(name) ? 2 : 1;
    } else {
      i += shortOptionWords(text, spec.short);
    }
  }
  return i;
}

/** How many words a cluster of short options like `-un` or `-uroot` takes: 2 when its argument follows. */
function shortOptionWords(cluster: string, withArgument: string): number {
  for (let j = 1; j < cluster.length; j++) {
    if (withArgument.includes(cluster[j] as string)) return j === cluster.length - 1 ? 2 : 1;
  }
  return 1;
}

/** `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... COMMAND`; short options cluster (`-iS`). */
function unwrapEnv(words: Word[]): Unwrapped {
  const computed: Unwrapped = { kind: 'unknown', reason: 'the arguments of env are computed at run time' };
  let i = 1;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return computed;
    const text = word.text;
    if (text === '--') {
      i++;
      break;
    }
    /** `-S STRING`: the string (attached, or the next word), split into the command's words. */
    let split: Word | undefined;
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const long = eq === -1 ? text.slice(2) : text.slice(2, eq);
      const takesNext = eq === -1 && ['split-string', 'unset', 'chdir'].includes(long);
      if (long === 'split-string') split = eq === -1 ? words[i + 1] : { ...word, text: text.slice(eq + 1) };
      i += takesNext ? 2 : 1;
    } else if (text.startsWith('-') && text !== '-') {
      let taken = 1;
      for (let j = 1; j < text.length; j++) {
        const option = text[j] as string;
        if (!'SuC'.includes(option)) continue;
        const value = text.slice(j + 1);
        if (value === '') taken = 2;
        if (option === 'S') split = value === '' ? words[i + 1] : { ...word, text: value };
        break;
      }
      i += taken;
    } else if (text === '-') {
      i++;
    } else if (/^[^=]+=/.test(text)) {
      // Bash imports `BASH_FUNC_name%%=() { ...; }` from its environment as a function.
      if (text.startsWith('BASH_FUNC_'))
        return { kind: 'unknown', reason: 'env defines a shell function through the environment' };
      i++;
    } else {
      break;
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
  return command.length > 0 ? { kind: 'wrapper', command } : { kind: 'none' };
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

/** `su [options] -c COMMAND [user]` (also `--session-command`); `runuser -u USER [--] COMMAND...` */
function unwrapSu(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  for (let i = 1; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (!(words[i] as Word).literal)
      return { kind: 'unknown', reason: `the arguments of ${name} are computed at run time` };
    const attached = /^(?:--command=|--session-command=|-c(?=.))(.*)$/s.exec(text);
    if (attached) return { kind: 'script', script: [{ ...(words[i] as Word), text: attached[1] as string }] };
    if (text === '-c' || text === '--command' || text === '--session-command') {
      const script = words[i + 1];
      return script === undefined ? { kind: 'none' } : { kind: 'script', script: [script] };
    }
  }
  if (name === 'runuser' && words.some((word) => /^(?:-u|--user(?:=|$))/.test(word.text))) {
    const start = skipOptions(words, 1, {
      short: 'ugGsw',
      long: ['user', 'group', 'supp-group', 'shell', 'whitelist-environment'],
    });
    const command = start === undefined ? [] : words.slice(start);
    if (command.length > 0) return { kind: 'wrapper', command };
  }
  return { kind: 'none' };
}

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
  const start = skipOptions(words, 1, {
    short: 'nqd',
    long: ['interval', 'differences', 'equexit', 'errexit', 'beep', 'no-title'],
  });
  if (start === undefined)
    return { kind: 'unknown', reason: 'the options of watch are computed at run time' };
  const script = words.slice(start);
  return script.length > 0 ? { kind: 'script', script } : { kind: 'none' };
}

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
