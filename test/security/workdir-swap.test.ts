// A workdir swapped between the worker's check and the launch: the worker checks a directory it may
// hand the session (its own, under a declared root), then the session's command replaces it with a
// link to /root before the launcher binds it. The launcher binds only the directory the worker
// checked (`--inode`), so the swap fails the launch instead of handing /root over. The launch is
// the worker's own (`SessionIsolation.launch`), run as the command runner runs it, with root.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/client/ownership.js';
import {
  createSessionIsolation,
  endSessionNetworks,
  type SessionIsolation,
} from '../../src/command-host/containment/session-isolation.js';
import { supervisorPath } from '../../src/command-host/supervisor/supervisor.js';
import type { TaskId } from '../../src/shared/task.js';
import { removeDir } from '../helpers/remove-dir.js';

let scratch: string;
let isolation: SessionIsolation;

beforeAll(() => {
  scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-workdir-swap-')));
  isolation = createSessionIsolation(
    { workdirRoots: [scratch] },
    supervisorPath(),
    path.join(scratch, 'spill'),
  );
});

afterAll(() => {
  if (scratch) {
    endSessionNetworks(path.join(scratch, 'spill'));
    removeDir(scratch);
  }
});

/** The worker's launch of `command` in `workdir`, for session mallory; `between` runs after the check. */
async function launched(workdir: string, command: string, between: () => void = () => undefined) {
  const { launcher, inner } = await isolation.launch({
    taskId: `bash-${randomUUID()}` as TaskId,
    command,
    workdir,
    background: false,
    taskQueue: 'unused',
    lostAfterMs: 60_000,
    session: sessionKey('mallory'),
  });
  between();
  const [program, ...args] = launcher as [string, ...string[]];
  const run = spawnSync(
    program,
    [...args, isolation.supervisor, '--inner', ...inner, '--', 'bash', '-c', command],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe.runIf(process.getuid?.() === 0)('a workdir swapped after the check', () => {
  it('binds the directory checked, shown as the session', async () => {
    const work = path.join(scratch, 'checked');
    mkdirSync(work);
    const run = await launched(work, 'touch made && stat -c %u made');
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^18\d{8}\n$/);
    expect(statSync(path.join(work, 'made')).uid).toBe(0);
  });

  it('fails the launch when a link to /root took its place, and hands nothing over', async () => {
    const work = path.join(scratch, 'swapped');
    mkdirSync(work);
    const run = await launched(work, 'ls -a', () => {
      renameSync(work, `${work}.moved`);
      symlinkSync('/root', work);
    });
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `durable-bash-supervisor: the workdir ${work} changed while it was being checked\n`,
    });
  });
});
