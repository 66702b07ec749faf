// Sessions' own directories (/tmp, /var/tmp, home) on a worker host: what a walk counts of them, the
// spill quota counting them with the tasks' files, and a session's disk cap's bound on files.
// Sessions apart are made for real (root here: a uid per session); no task runs.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionKey } from '../../../src/client/ownership.js';
import {
  createSessionIsolation,
  endSessionNetworks,
} from '../../../src/command-host/containment/session-isolation.js';
import { diskUsage } from '../../../src/command-host/spill/disk-usage.js';
import { DiskCapRefusedError, SessionDisk } from '../../../src/command-host/spill/session-disk.js';
import { sweepSpillDir } from '../../../src/command-host/spill/spill-sweeper.js';
import { supervisorPath } from '../../../src/command-host/supervisor/supervisor.js';
import { taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import type { TaskId } from '../../../src/shared/task.js';
import { removeDir } from '../../helpers/remove-dir.js';
import { TEST_WORKDIR_ROOTS } from '../../helpers/workdir-roots.js';

const DAY_MS = 24 * 60 * 60_000;
/** The uid a worker without root runs as here. */
const NOBODY = 65534;
const KIB = 1024;
const scratches: string[] = [];

afterEach(() => {
  for (const dir of scratches.splice(0)) {
    endSessionNetworks(path.join(dir, 'spill'));
    removeDir(dir);
  }
});

function scratch(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-session-disk-')));
  scratches.push(dir);
  mkdirSync(path.join(dir, 'work'));
  return dir;
}

/** What `du` says `paths` hold on disk, in bytes (blocks; a file with several names once; links not followed). */
function du(...paths: string[]): number {
  const out = spawnSync('du', ['-s', '-c', '-B1', ...paths], { encoding: 'utf8' }).stdout;
  return Number(/^(\d+)\s+total$/m.exec(out)?.[1]);
}

/** Sessions apart in `dir`'s spill directory, and a launch of a task of `session` there (its directories made). */
function sessionsIn(dir: string) {
  const spill = path.join(dir, 'spill');
  mkdirSync(spill, { mode: 0o700 });
  const isolation = createSessionIsolation({ workdirRoots: TEST_WORKDIR_ROOTS }, supervisorPath(), spill);
  const launch = async (session: string): Promise<string> => {
    const taskId = `bash-${randomUUID()}`;
    await isolation.launch({
      taskId: taskId as TaskId,
      command: 'true',
      workdir: path.join(dir, 'work'),
      background: true,
      taskQueue: 'q',
      lostAfterMs: 1,
      session,
    });
    return taskId;
  };
  const area = (session: string, name: 'tmp' | 'var-tmp' | 'home') =>
    path.join(spill, '.sessions', session, name);
  return { spill, isolation, launch, area };
}

/** A task's records as its supervisor leaves them: claimed, and ended when `ended`. */
function claim(spill: string, taskId: string, ended: boolean): void {
  const files = taskFiles(spill, taskId);
  writeFileSync(files.state, '{}');
  writeFileSync(files.stdout, '');
  if (ended) writeFileSync(files.exit, '{}');
}

describe("a session's files on its host", () => {
  it('are counted as du counts them: blocks, a file with two names once, links not followed, a sparse file by what it holds', async () => {
    const dir = scratch();
    const tree = path.join(dir, 'tree');
    mkdirSync(path.join(tree, 'deep', 'er'), { recursive: true });
    writeFileSync(path.join(tree, 'deep', 'er', 'data'), Buffer.alloc(256 * KIB, 1));
    linkSync(path.join(tree, 'deep', 'er', 'data'), path.join(tree, 'again'));
    symlinkSync('/usr', path.join(tree, 'usr'));
    writeFileSync(path.join(tree, 'sparse'), 'x');
    truncateSync(path.join(tree, 'sparse'), 1024 * 1024 * KIB);
    expect(await diskUsage([tree, path.join(dir, 'missing')], 100)).toEqual({
      bytes: du(tree),
      files: 7,
      complete: true,
    });
    // More entries than the bound: the walk stops one past it.
    expect(await diskUsage([tree], 3)).toMatchObject({ files: 4, complete: false });
  });

  it('are all counted by a walker without root, a directory closed to its owner too (opened to it first)', async () => {
    const dir = scratch();
    chmodSync(dir, 0o755);
    const tree = path.join(dir, 'tree');
    mkdirSync(path.join(tree, 'closed'), { recursive: true });
    writeFileSync(path.join(tree, 'closed', 'hidden'), Buffer.alloc(64 * KIB, 1));
    spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, tree]);
    chmodSync(path.join(tree, 'closed'), 0);
    const bytes = du(tree);
    // The walk as a worker run as nobody walks it: its module and node where nobody reaches them.
    cpSync(path.resolve('dist/command-host/spill/disk-usage.js'), path.join(dir, 'disk-usage.mjs'));
    const node = path.join(dir, 'node');
    if (spawnSync('cp', ['-l', process.execPath, node]).status !== 0) cpSync(process.execPath, node);
    const walk = (ownerMayOpen: boolean) => {
      const script = `const { diskUsage } = await import(${JSON.stringify(path.join(dir, 'disk-usage.mjs'))}); console.log((await diskUsage([${JSON.stringify(tree)}], 100, ${ownerMayOpen})).bytes)`;
      const run = spawnSync(
        'setpriv',
        [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          node,
          '--input-type=module',
          '-e',
          script,
        ],
        { encoding: 'utf8' },
      );
      return Number(run.stdout);
    };
    expect(walk(false)).toBe(bytes - 64 * KIB);
    expect(walk(true)).toBe(bytes);
    expect(statSync(path.join(tree, 'closed')).mode & 0o777).toBe(0o500);
  });

  it("count toward the spill quota: over it, ended tasks' files and idle sessions' directories go oldest first, never a session with a task running", async () => {
    const dir = scratch();
    const { spill, isolation, launch, area } = sessionsIn(dir);
    const [idle, busy] = [sessionKey('idle'), sessionKey('busy')];
    const idleTask = await launch(idle);
    const busyTask = await launch(busy);
    claim(spill, idleTask, true);
    claim(spill, busyTask, false);
    for (const session of [idle, busy])
      writeFileSync(path.join(area(session, 'tmp'), 'f'), Buffer.alloc(64 * KIB));
    // A task that ended a day ago, with output of its own.
    const old = `bash-${randomUUID()}`;
    writeFileSync(taskFiles(spill, old).stdout, 'x'.repeat(100));
    const dayAgo = new Date(Date.now() - DAY_MS);
    utimesSync(taskFiles(spill, old).stdout, dayAgo, dayAgo);
    const busyAreas = du(area(busy, 'tmp'), area(busy, 'var-tmp'), area(busy, 'home'));
    const sessions = new SessionDisk({ spillDir: spill, capBytes: 1024 * 1024 * KIB, isolation });
    const active = new Set([taskFiles(spill, busyTask).stdout]);
    const quota = busyAreas + 4 * KIB;
    await sweepSpillDir(spill, 7 * DAY_MS, active, Date.now(), quota, 7 * DAY_MS, sessions);
    // The day-old task went first, then the idle session (its uid given back too); the busy one stays.
    expect(existsSync(taskFiles(spill, old).stdout)).toBe(false);
    expect(readdirSync(path.join(spill, '.sessions')).sort()).toEqual([busy, 'uids'].sort());
    expect(readdirSync(area(busy, 'tmp'))).toEqual(['f']);
    expect(existsSync(taskFiles(spill, busyTask).stdout)).toBe(true);
    // Over the quota with only the busy session's own files: they stay, its task runs.
    await sweepSpillDir(spill, 7 * DAY_MS, active, Date.now(), KIB, 7 * DAY_MS, sessions);
    expect(readdirSync(area(busy, 'tmp'))).toEqual(['f']);
  });

  it('are over their disk cap when they hold more files than the worker counts, and a plain rm still runs', async () => {
    const dir = scratch();
    const { spill, isolation, launch, area } = sessionsIn(dir);
    const session = sessionKey('many-files');
    await launch(session);
    for (let i = 0; i < 20; i++) writeFileSync(path.join(area(session, 'tmp'), `f${i}`), '');
    const sessions = new SessionDisk({
      spillDir: spill,
      capBytes: 1024 * 1024 * KIB,
      isolation,
      maxFiles: 10,
    });
    const admit = (command: string) =>
      sessions.admit({ taskId: `bash-${randomUUID()}` as TaskId, command, session });
    const refusal =
      "this session's files on its host hold more than 10 files, over its disk cap of 10 files: remove some from /tmp, /var/tmp or its home with rm (until then only a plain rm command runs)";
    await expect(admit('ls /tmp')).rejects.toThrow(new DiskCapRefusedError(refusal));
    await expect(admit('rm -f /tmp/f1* \'/tmp/f 2\' "/tmp/f3"')).resolves.toEqual({ cleanup: true });
    // Anything else bash could run or write with it is no plain rm.
    for (const command of [
      'rm /tmp/f1; ls',
      'rm $(ls)',
      'rm x > /tmp/y',
      'PATH=/tmp rm x',
      'rm "$HOME"',
      'rm {a,b}',
    ])
      await expect(admit(command)).rejects.toThrow(refusal);
  });
});
