/**
 * Environment variables whose value another program runs as a command: git's editors, pager, ssh
 * and diff commands (the environment's form of the `-c` keys git-options.ts reads), the editor and
 * pager that git and many other programs fall back on, and the command an interactive bash runs
 * before each prompt. Which program later reads the value cannot be told from the line, so an
 * assignment of one, wherever the line makes it, hands its value to the check as a command.
 * Checked with git 2.39, man-db 2.11 and bash 5.2.
 */
import { excerpt, shellQuote, type Word } from './shell-words.js';

/**
 * How the value is run: a `script` by a shell (git runs `sh -c '<value> "$@"'`), or split into a
 * command's words (man-db's PAGER); a `program` by its path, with no shell and with arguments of the
 * caller's (GIT_SSH gets the host and the remote command).
 */
type CommandKind = 'script' | 'program';

const COMMAND_VARIABLES = new Map<string, CommandKind>([
  ['GIT_EDITOR', 'script'],
  ['GIT_SEQUENCE_EDITOR', 'script'],
  ['GIT_PAGER', 'script'],
  ['GIT_SSH_COMMAND', 'script'],
  ['GIT_EXTERNAL_DIFF', 'script'],
  ['EDITOR', 'script'],
  ['VISUAL', 'script'],
  ['PAGER', 'script'],
  ['PROMPT_COMMAND', 'script'],
  ['GIT_SSH', 'program'],
  ['GIT_ASKPASS', 'program'],
  ['SSH_ASKPASS', 'program'],
  ['GIT_PROXY_COMMAND', 'program'],
]);

export function isCommandVariable(name: string): boolean {
  return COMMAND_VARIABLES.has(name);
}

/** Why the value of the command variable `name`, as `shown`, cannot be read: it is known only at run time. */
export function commandVariableReason(name: string, shown: string): string {
  return `${name} holds a command another program runs, and its value is known only at run time: ${excerpt(shown)}`;
}

/**
 * What assigning `value` (undefined when it is known only at run time: computed, appended to, read
 * from input) to `name` hands a later program to run: the source of a script to read (a program's
 * path quoted as one word), or why it cannot be read; undefined for a variable of no command.
 */
export function assignedCommand(
  name: string,
  value: Word | undefined,
  shown: string,
): { source: string } | { reason: string } | undefined {
  const kind = COMMAND_VARIABLES.get(name);
  if (kind === undefined) return undefined;
  if (value === undefined || !value.literal) return { reason: commandVariableReason(name, shown) };
  return { source: kind === 'script' ? value.text : shellQuote(value.text) };
}
