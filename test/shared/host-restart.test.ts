import { describe, expect, it } from 'vitest';
import { restartLine, restartsNote } from '../../src/shared/host-restart.js';
import { positionOn, START_OF_OUTPUT } from '../../src/shared/read-position.js';
import { finishedState, statusLine } from '../../src/shared/status-line.js';
import type { BashTaskResult } from '../../src/shared/task.js';
import { bashArguments, parseArguments } from '../../src/tools/arguments.js';
import { taskTable } from '../../src/tools/task-table.js';

const result = (over: Partial<BashTaskResult>): BashTaskResult => ({
  exitCode: 0,
  signal: null,
  stdout: { bytes: 0, tail: '' },
  stderr: { bytes: 0, tail: '' },
  host: 'h',
  ...over,
});

describe('what a task restarted after its host was lost says', () => {
  it('writes the restart line first, naming both hosts', () => {
    expect(restartLine('host-b', 'host-a')).toBe('[restarted on host-b after host-a was lost]\n');
  });

  it('adds the restarts to every status line, and nothing for none', () => {
    expect(restartsNote(undefined)).toBe('');
    expect(restartsNote(0)).toBe('');
    expect(statusLine({ status: 'running', restarts: 1 })).toBe(
      '[status: running (restarted once after its host was lost)]',
    );
    expect(statusLine(finishedState(result({ exitCode: 3, restarts: 2 })))).toBe(
      '[status: completed, exit code: 3 (restarted 2 times after its host was lost)]',
    );
    expect(statusLine(finishedState(result({ exitCode: null, signal: 'SIGTERM', restarts: 1 })))).toBe(
      '[status: killed by SIGTERM (restarted once after its host was lost)]',
    );
    // A task never restarted reads exactly as before.
    expect(statusLine(finishedState(result({ exitCode: 3 })))).toBe('[status: completed, exit code: 3]');
    expect(statusLine({ status: 'lost', reason: 'its worker stopped answering' })).toBe(
      '[status: lost: its worker stopped answering]',
    );
  });

  it('lists the restarts in the status column', () => {
    const now = new Date('2026-12-05T10:00:00Z');
    const table = taskTable(
      [
        {
          taskId: 'bash-1',
          status: 'running',
          startedAt: now,
          closedAt: undefined,
          command: 'npm run dev',
          description: 'Dev server',
          owner: 's',
          background: true,
          restarts: 1,
        },
      ],
      now,
    );
    expect(table).toContain('bash-1  running (restarted once after its host was lost)  ');
  });

  it('reads a position counted on another host from the start', () => {
    const held = { position: { stdout: 500, stderr: 7 }, host: 'q@a' };
    expect(positionOn(held, 'q@a')).toEqual(held.position);
    expect(positionOn(held, 'q@b')).toEqual(START_OF_OUTPUT);
    // A claim that names no host, or a position no read has tied to one, stays as it is.
    expect(positionOn(held, undefined)).toEqual(held.position);
    expect(positionOn({ position: held.position }, 'q@b')).toEqual(held.position);
  });
});

describe('on_host_loss', () => {
  const call = { command: 'npm run dev', description: 'Dev server' };

  it('takes "lost" or "restart" on a background run', () => {
    expect(
      parseArguments(bashArguments, { ...call, run_in_background: true, on_host_loss: 'restart' }),
    ).toEqual({
      ...call,
      run_in_background: true,
      on_host_loss: 'restart',
    });
  });

  it('refuses a foreground run and any other value, in one line', () => {
    expect(() => parseArguments(bashArguments, { ...call, on_host_loss: 'restart' })).toThrow(
      /^invalid on_host_loss: on_host_loss is for a background run; set run_in_background: true$/,
    );
    expect(() =>
      parseArguments(bashArguments, { ...call, run_in_background: true, on_host_loss: 'retry' }),
    ).toThrow(/^invalid on_host_loss: expected "lost" or "restart", got "retry"$/);
  });
});
