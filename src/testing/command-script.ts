/**
 * What a scripted command does, in workflow time: what it prints and when, how it ends, what a
 * SIGTERM does to it. `script()` starts one; each step returns a
 * new script, so a common start can be shared:
 *
 *   script().prints('building\n').after('3 hours').prints('done\n').exits(0)
 *   script().prints('listening on :3000\n')                  // never ends
 *   script().ignoresSigterm()                                // a kill ends it with SIGKILL
 *   script().prints('migrating\n').after('1 hour').hostDies() // its host never comes back
 */
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';

export type ScriptStream = 'stdout' | 'stderr';

/** One write of the command: `text` to `stream`, `atMs` after the command started. */
export interface ScriptWrite {
  atMs: number;
  stream: ScriptStream;
  text: string;
}

/** What a SIGTERM does: ends the command (the default), nothing, or runs a trap that prints and exits. */
export type SigtermBehaviour =
  | { kind: 'dies' }
  | { kind: 'ignores' }
  | { kind: 'traps'; prints: string; exitCode: number };

/** The plain description a script builds; what the scripted host plays. */
export interface ScriptPlan {
  writes: readonly ScriptWrite[];
  /** When the command exits on its own, and with what; absent: it never ends. */
  exit?: { atMs: number; exitCode: number };
  /** When the command's host dies (its workers stop, and none comes back); absent: it lives. */
  hostDiesAtMs?: number;
  sigterm: SigtermBehaviour;
}

export class CommandScript {
  private constructor(
    readonly plan: ScriptPlan,
    /** Where the next step happens, in ms after the start. */
    private readonly cursorMs: number,
  ) {}

  /** An empty script: prints nothing, never ends, dies of SIGTERM. */
  static start(): CommandScript {
    return new CommandScript({ writes: [], sigterm: { kind: 'dies' } }, 0);
  }

  /** Moves on by `duration` of workflow time ('3 hours', '90s', or ms). */
  after(duration: Duration): CommandScript {
    const ms = msToNumber(duration);
    if (!(ms >= 0)) throw new TypeError(`after: expected a duration of 0 or more, got ${String(duration)}`);
    return this.next({}, this.cursorMs + ms);
  }

  /** Prints `text` to stdout now. */
  prints(text: string): CommandScript {
    return this.write('stdout', text);
  }

  /** Prints `text` to stderr now. */
  printsToStderr(text: string): CommandScript {
    return this.write('stderr', text);
  }

  /** Exits with `exitCode` now. Nothing after it happens. */
  exits(exitCode: number): CommandScript {
    if (!Number.isInteger(exitCode) || exitCode < 0 || exitCode > 255)
      throw new TypeError(`exits: expected an exit code from 0 to 255, got ${exitCode}`);
    return this.next({ exit: { atMs: this.cursorMs, exitCode } });
  }

  /**
   * The command's host dies now: its workers stop and none comes back, so the task ends lost once
   * the lost window (`lostAfterMs`, 10 minutes by default) has passed. The whole host dies, with
   * every command on it. Nothing after it happens.
   */
  hostDies(): CommandScript {
    return this.next({ hostDiesAtMs: this.cursorMs });
  }

  /** Ignores SIGTERM: a kill or a timeout ends it with SIGKILL once the kill's grace is over. */
  ignoresSigterm(): CommandScript {
    return this.with({ sigterm: { kind: 'ignores' } });
  }

  /** Traps SIGTERM: prints `prints` and exits with `exitCode` when a kill or a timeout comes. */
  trapsSigterm(trap: { prints?: string; exits: number }): CommandScript {
    if (!Number.isInteger(trap.exits) || trap.exits < 0 || trap.exits > 255)
      throw new TypeError(`trapsSigterm: expected an exit code from 0 to 255, got ${trap.exits}`);
    return this.with({ sigterm: { kind: 'traps', prints: trap.prints ?? '', exitCode: trap.exits } });
  }

  private write(stream: ScriptStream, text: string): CommandScript {
    return this.next({ writes: [...this.plan.writes, { atMs: this.cursorMs, stream, text }] });
  }

  /** A step of the command's: none comes after its exit or its host's death. */
  private next(change: Partial<ScriptPlan>, cursorMs = this.cursorMs): CommandScript {
    if (this.plan.exit !== undefined) throw new TypeError('a script has no steps after exits()');
    if (this.plan.hostDiesAtMs !== undefined) throw new TypeError('a script has no steps after hostDies()');
    return this.with(change, cursorMs);
  }

  private with(change: Partial<ScriptPlan>, cursorMs = this.cursorMs): CommandScript {
    return new CommandScript({ ...this.plan, ...change }, cursorMs);
  }
}

/** A new script (see `CommandScript`). */
export function script(): CommandScript {
  return CommandScript.start();
}

/** What a command has written to a stream by `atMs` after its start, as bytes. */
export function writtenBy(plan: ScriptPlan, stream: ScriptStream, atMs: number): Buffer {
  return Buffer.from(
    plan.writes
      .filter((write) => write.stream === stream && write.atMs <= atMs)
      .map((write) => write.text)
      .join(''),
  );
}

/** The next time after `atMs` at which something happens (a write, the exit, the host's death). */
export function nextEventAfter(plan: ScriptPlan, atMs: number): number | undefined {
  const times = [
    ...plan.writes.map((write) => write.atMs),
    ...(plan.exit ? [plan.exit.atMs] : []),
    ...(plan.hostDiesAtMs !== undefined ? [plan.hostDiesAtMs] : []),
  ].filter((time) => time > atMs);
  return times.length > 0 ? Math.min(...times) : undefined;
}
