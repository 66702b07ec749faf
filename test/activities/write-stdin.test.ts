import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWriteStdin } from '../../src/activities/write-stdin.js';
import { compileExecutorOptions } from '../../src/command-host/executor-config.js';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { TerminalLogs } from '../../src/command-host/terminal/terminal-logs.js';

// The stdin activity against a FIFO the test plays the supervisor for: the window between the
// supervisor making the FIFO and opening it is microseconds in the real thing, too short to hit
// on purpose.
const taskId = 'bash-00000000-0000-4000-8000-0000000000aa';
const opened: number[] = [];

afterEach(() => {
  for (const fd of opened.splice(0)) closeSync(fd);
});

function setUp() {
  const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-stdin-'));
  const files = taskFiles(spillDir, taskId);
  execFileSync('mkfifo', ['-m', '600', files.stdin]);
  const record = (pid: number) =>
    writeFileSync(
      files.state,
      `${JSON.stringify({ v: 1, supervisorPid: process.pid, supervisorStart: 1, bootId: 'b', pid, pidStart: pid ? 1 : 0, startedAtMs: Date.now() })}\n`,
    );
  const holdOpen = () => {
    const fd = openSync(files.stdin, constants.O_RDWR | constants.O_NONBLOCK);
    opened.push(fd);
    return fd;
  };
  const writeStdin = createWriteStdin(compileExecutorOptions({ spillDir }, 'test'), new TerminalLogs());
  return { record, holdOpen, writeStdin };
}

describe('the stdin write activity', () => {
  it('waits for a supervisor that has made the FIFO but not yet opened it, then writes', async () => {
    const { record, holdOpen, writeStdin } = setUp();
    record(0); // Claimed; the command is not named yet.
    let reader: number | undefined;
    setTimeout(() => {
      reader = holdOpen();
      record(process.pid);
    }, 300);
    expect(await writeStdin({ taskId, text: 'mine\n', close: false })).toEqual({
      kind: 'written',
      bytes: 5,
      closed: false,
    });
    const got = Buffer.alloc(16);
    expect(got.toString('utf8', 0, readSync(reader as number, got))).toBe('mine\n');
  });

  it('says the stdin is closed when no one holds the FIFO of a command that runs', async () => {
    const { record, writeStdin } = setUp();
    record(process.pid);
    expect(await writeStdin({ taskId, text: 'late\n', close: false })).toEqual({ kind: 'closed' });
  });
});
