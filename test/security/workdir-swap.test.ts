// A workdir swapped between the worker's check and the launch: the worker checks a directory it may
// hand the session (its own, under a declared root), then the session's command replaces it with a
// link to /root before the launcher binds it. The launcher binds only the directory the worker
// checked (`--inode`), so the swap fails the launch instead of handing /root over. The launch is
// the worker's own (`SessionIsolation.launch`), run as the command runner runs it, with root.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/client/ownership.js';
import { createSandbox } from '../../src/command-host/containment/sandbox.js';
import {
  createSessionIsolation,
  endSessionNetworks,
  type SessionIsolation,
} from '../../src/command-host/containment/session-isolation.js';
import { supervisorPath } from '../../src/command-host/supervisor/supervisor.js';
import type { CommandSpec, TaskId } from '../../src/shared/task.js';
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

/** What launches a command: sessions apart's, or the sandbox's. */
type Launching = Pick<SessionIsolation, 'supervisor'> & {
  launch(
    spec: CommandSpec,
  ): Promise<{ launcher: string[]; inner: string[] }> | { launcher: string[]; inner: string[] };
};

/** The worker's launch of `command` in `workdir`, for session mallory; `between` runs after the check. */
async function launched(
  workdir: string,
  command: string,
  between: () => void = () => undefined,
  by: Launching = isolation,
) {
  const { launcher, inner } = await by.launch({
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
  const run = spawnSync(program, [...args, by.supervisor, '--inner', ...inner, '--', 'bash', '-c', command], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
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

  it("will not follow a link the session planted in its own /tmp on the way to a handed workdir: the host's file keeps its mode", async () => {
    // A workdir below /tmp is bound into the session's own /tmp, the directories on its way made
    // there by the launcher, as root: the session owns that /tmp, so it can plant a link on the way.
    const work = path.join(scratch, 'under-tmp');
    mkdirSync(work);
    const victim = path.join(scratch, 'victim');
    writeFileSync(victim, 'root only\n', { mode: 0o600 });
    // The session's own /tmp on the host (sessions apart keeps it in the spill directory).
    const sessionTmp = path.join(scratch, 'spill', '.sessions', sessionKey('mallory'), 'tmp');
    const firstBelowTmp = path.relative('/tmp', work).split('/')[0] as string;
    const run = await launched(work, 'true', () => {
      rmSync(path.join(sessionTmp, firstBelowTmp), { recursive: true, force: true });
      symlinkSync(victim, path.join(sessionTmp, firstBelowTmp));
    });
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `durable-bash-supervisor: will not follow a link a session may have made on the way to /tmp/${firstBelowTmp}: Too many levels of symbolic links\n`,
    });
    expect(statSync(victim).mode & 0o7777).toBe(0o600);
  });

  it("runs nothing in the sandbox when a link took the checked directory's place: bwrap binds by path", async () => {
    const sandbox = createSandbox(
      { workdirRoots: [scratch] },
      supervisorPath(),
      path.join(scratch, 'sandbox-spill'),
    );
    const work = path.join(scratch, 'sandboxed');
    mkdirSync(work);
    const secret = path.join(scratch, 'secret');
    mkdirSync(secret, { mode: 0o700 });
    const run = await launched(
      work,
      'touch planted',
      () => {
        renameSync(work, `${work}.moved`);
        symlinkSync(secret, work);
      },
      { supervisor: sandbox.supervisor, launch: (spec) => sandbox.launch(spec) },
    );
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `durable-bash-supervisor: the workdir ${work} changed while it was being checked\n`,
    });
    expect(existsSync(path.join(secret, 'planted'))).toBe(false);
  });
});
