/**
 * git's global options, so that a rule on `git push` sees `git -C . push` and `git --no-pager
 * push` as `git push`, and the configuration they can set, where a key can make git run what a
 * rule never sees: an alias (`git -c alias.p=push p` runs push), a pager or an editor, a filter.
 * As git.c's `handle_options` reads them (git 2.39 to 2.47); an option it does not list makes the
 * line uncertain, since it could take the next word and the subcommand would be another.
 */

import { excerpt, shellQuote, type Word } from './shell-words.js';
import type { Unwrapped } from './unwrapped.js';

/** Global options that take the next word (or an attached `=value`, for the long ones). */
const WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
  '--shallow-file',
  '--attr-source',
]);

/** Global options that take no value. */
const FLAGS = new Set([
  '-p',
  '--paginate',
  '-P',
  '--no-pager',
  '--no-lazy-fetch',
  '--no-replace-objects',
  '--bare',
  '--literal-pathspecs',
  '--no-literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-optional-locks',
  '--no-advice',
]);

/** Options with which git prints something and runs no subcommand. */
const PRINT_ONLY = /^(?:--exec-path|--html-path|--man-path|--info-path|--list-cmds=.*)$/s;

/** Words git reads as the subcommand though they look like options (`git --version` runs `version`). */
const SUBCOMMAND_OPTIONS = new Set(['-h', '--help', '-v', '--version']);

/**
 * `git [global options] SUBCOMMAND ...`: the command without its global options (a layer a rule
 * on `git push` matches), with the pager and editor commands its `-c` set handed to a shell; none
 * when there are no global options.
 */
export function unwrapGit(words: Word[]): Unwrapped {
  const scripts: Word[] = [];
  let i = 1;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return { kind: 'unknown', reason: 'the options of git are computed at run time' };
    const text = word.text;
    if (!text.startsWith('-') || SUBCOMMAND_OPTIONS.has(text)) break;
    if (PRINT_ONLY.test(text)) return { kind: 'none' };
    if (FLAGS.has(text)) {
      i++;
      continue;
    }
    const eq = text.indexOf('=');
    const attached = text.startsWith('--') && eq !== -1;
    const option = attached ? text.slice(0, eq) : text;
    if (!WITH_VALUE.has(option) && option !== '--exec-path')
      return { kind: 'unknown', reason: `git has a global option this check does not know: ${text}` };
    const value = attached ? { ...word, text: text.slice(eq + 1) } : words[i + 1];
    i += attached ? 1 : 2;
    if (value === undefined) return { kind: 'none' };
    // git runs the programs of its subcommands, hooks and transports (`git-<name>`) from that directory.
    if (option === '--exec-path')
      return {
        kind: 'unknown',
        reason: `git --exec-path names where git finds the programs it runs: ${text}`,
      };
    if (option === '-c' || option === '--config-env') {
      if (!value.literal)
        return { kind: 'unknown', reason: 'git -c sets a configuration computed at run time' };
      const setting = configSetting(value.text, option);
      if (setting.reason !== undefined) return { kind: 'unknown', reason: setting.reason };
      if (setting.script !== undefined) scripts.push({ ...value, text: setting.script });
    }
  }
  if (i === 1) return { kind: 'none' };
  const command = [words[0] as Word, ...words.slice(i)];
  return command.length > 1 ? { kind: 'wrapper', command, scripts } : { kind: 'none' };
}

/**
 * Sections whose keys name no command git runs (a subsection's keys included: `color.diff.meta`,
 * `http.<url>.proxy`). `core`, `diff`, `merge` and `submodule` are read key by key below; any other
 * section (`alias`, `include`, `credential`, `filter`, `gpg`, `help`, whose autocorrect runs a
 * misspelt subcommand as another, `remote`, `protocol`, ...) is uncertain.
 */
const PLAIN_SECTIONS = new Set([
  'add',
  'advice',
  'am',
  'apply',
  'author',
  'blame',
  'branch',
  'checkout',
  'clone',
  'color',
  'column',
  'commit',
  'committer',
  'feature',
  'fetch',
  'format',
  'fsck',
  'gc',
  'grep',
  'http',
  'i18n',
  'index',
  'init',
  'log',
  'maintenance',
  'notes',
  'pack',
  'pretty',
  'pull',
  'push',
  'rebase',
  'receive',
  'rerere',
  'reset',
  'safe',
  'stash',
  'status',
  'tag',
  'transfer',
  'url',
  'user',
  'versionsort',
  'worktree',
]);

/** Sections whose two-part keys name no command, and whose three-part keys (drivers) may. */
const DRIVER_SECTIONS = new Set(['diff', 'merge', 'submodule']);

/**
 * Keys whose value git runs: through a shell (`sh -c '<value> "$@"'`), read as a script; or as a
 * program's path, with arguments of git's, read as that program's name (as their environment forms
 * are, command-variables.ts).
 */
const COMMAND_VALUE_KEYS = new Map<string, 'script' | 'program'>([
  ['core.pager', 'script'],
  ['core.editor', 'script'],
  ['core.sshcommand', 'script'],
  ['sequence.editor', 'script'],
  ['diff.external', 'script'],
  ['core.askpass', 'program'],
]);

/** Keys of `core` and the driver sections that name a command or a place git runs commands from. */
const COMMAND_KEYS = new Set([
  'core.gitproxy',
  'core.fsmonitor',
  'core.hookspath',
  'core.alternaterefscommand',
]);

/**
 * What a `-c NAME=VALUE` (or `--config-env NAME=ENVVAR`, whose value is not in the words) does for
 * a check: a reason when the key can make git run what the check cannot see, or the script a
 * command key's value is.
 */
function configSetting(setting: string, option: string): { reason?: string; script?: string } {
  const eq = setting.indexOf('=');
  const key = (eq === -1 ? setting : setting.slice(0, eq)).toLowerCase();
  const value = eq === -1 ? '' : setting.slice(eq + 1);
  const reason = configKeyReason(key, `git ${option}`, setting);
  if (reason !== undefined) return { reason };
  const kind = commandKey(key);
  if (kind === undefined) return {};
  if (option !== '-c') return { reason: `git ${option} sets a command git runs: ${setting}` };
  return { script: kind === 'script' ? value : shellQuote(value) };
}

/** How git runs a key's value (`pager.<cmd>` is a pager), or undefined for a key of no command. */
function commandKey(key: string): 'script' | 'program' | undefined {
  return COMMAND_VALUE_KEYS.get(key) ?? (/^pager\.[^.]+$/.test(key) ? 'script' : undefined);
}

/** Why a configuration key (lower case) that `setter` sets makes a git command uncertain, or undefined. */
function configKeyReason(key: string, setter: string, shown: string): string | undefined {
  const parts = key.split('.');
  const section = parts[0] as string;
  if (section === 'alias')
    return `${setter} sets an alias, which can stand for another git command: ${shown}`;
  if (commandKey(key) !== undefined) return undefined;
  const plain =
    PLAIN_SECTIONS.has(section) ||
    (section === 'core' && parts.length === 2 && !COMMAND_KEYS.has(key)) ||
    (DRIVER_SECTIONS.has(section) && parts.length === 2 && !COMMAND_KEYS.has(key));
  return plain ? undefined : `${setter} sets a key that can make git run a command: ${shown}`;
}

/**
 * Why assigning `value` (as written; undefined when it comes from input) to the environment
 * variable `name` may make git run what a check cannot see: git reads `-c` settings from
 * GIT_CONFIG_PARAMETERS and from GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>, and the directory of its
 * programs from GIT_EXEC_PATH (what `--exec-path=DIR` sets). The commands git's other variables
 * hold are read as commands (command-variables.ts).
 */
export function gitEnvironmentReason(name: string, value: string | undefined): string | undefined {
  if (name === 'GIT_EXEC_PATH')
    return `GIT_EXEC_PATH names where git finds the programs it runs: ${excerpt(`${name}=${value ?? '…'}`)}`;
  if (name === 'GIT_CONFIG_PARAMETERS')
    return 'GIT_CONFIG_PARAMETERS gives git configuration this check does not read';
  if (!/^GIT_CONFIG_KEY_\d+$/.test(name)) return undefined;
  const key = value?.replace(/["'\\]/g, '');
  if (key === undefined || /[$`]/.test(key)) return `${name} names a git configuration key at run time`;
  const reason = configKeyReason(key.toLowerCase(), name, key);
  if (reason !== undefined) return reason;
  return commandKey(key.toLowerCase()) !== undefined ? `${name} sets a command git runs: ${key}` : undefined;
}
