import type { TerminalSize } from './terminal.js';

/** A write to a running task's stdin (`bash_input`), on its way through the task's workflow to its host. */
export interface StdinWrite {
  /** Written as UTF-8, byte for byte: a line needs its own `\n`. */
  text: string;
  /** Close the command's stdin (EOF) once the text has gone in. */
  close: boolean;
  /** Keys in tmux's spelling, typed after the text (their bytes depend on the terminal's modes). */
  keys?: string[];
  /** A terminal task's new size, set before anything is typed (the program gets SIGWINCH). */
  size?: TerminalSize;
}

export interface StdinWriteRequest extends StdinWrite {
  /**
   * The task it writes to, and the id of the update that carries it: a write copied from a history
   * is refused by any other task, and by its own task under a new update id (under its own, the
   * server answers with the recorded outcome and writes nothing). Clients of 0.2.0 send neither;
   * their writes expire within seconds.
   */
  taskId?: string;
  writeId?: string;
  /**
   * On the server's clock. The workflow refuses a write it takes later than this, and no host
   * starts one after it, so a caller that stopped waiting never sees its text land afterwards.
   */
  expiresAtMs: number;
}

/** What the task's host did with a write. */
export type StdinWriteResult =
  /** All of the text went in; `closed`: the command's stdin was then closed. */
  | { kind: 'written'; bytes: number; closed: boolean }
  /** The command is not reading: only the first `bytes` of `total` fit, and stdin stays open. */
  | { kind: 'partial'; bytes: number; total: number }
  /** Its stdin was closed before (by `close`, or by the command): nothing was written. */
  | { kind: 'closed' }
  /** The command has ended: nothing was written. */
  | { kind: 'ended' }
  /** The command has not started yet (its host has not spawned it): nothing was written. */
  | { kind: 'not-started' }
  /** No worker on the command's host took the write before its expiry: nothing was written. */
  | { kind: 'no-host' }
  /** Earlier writes held the stdin (a command not reading) until this one expired: nothing was written. */
  | { kind: 'expired'; waitedMs: number }
  /** A resize of a task that has no terminal: nothing was written. */
  | { kind: 'no-terminal' };

/** What the host's activity gets: the task and the write. */
export interface StdinWriteTask extends StdinWrite {
  taskId: string;
}

/** How the workflow refuses a write past its expiry; its own time follows, for the caller's clock. */
export const STDIN_WRITE_EXPIRED = 'stdin write expired; workflow time ';

/** The text a resize is refused with when the task has no terminal. */
export const noTerminal = (taskId: string) =>
  `task ${taskId} was not started with tty: true; it has no terminal to resize`;
