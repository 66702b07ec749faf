/** What a simple command runs, as the wrapper rules read it (command-wrappers.ts, git-options.ts). */
import type { Word } from './shell-words.js';

export type Unwrapped =
  /** Runs no other command that its words show. */
  | { kind: 'none' }
  /**
   * Runs `command` (its words, the wrapper's own options gone), and hands the strings `scripts` to
   * a shell (`git -c core.pager=...`).
   */
  | { kind: 'wrapper'; command: Word[]; scripts?: Word[] }
  /** Words bash joins with spaces and runs as a script. */
  | { kind: 'script'; script: Word[] }
  | { kind: 'commands'; commands: Word[][] }
  /** Runs what the check cannot read: the line is uncertain, for `reason`. */
  | { kind: 'unknown'; reason: string };
