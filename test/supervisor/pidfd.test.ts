// The supervisor binary's signals for the worker (`--signal`, `--signal-group`, `--kill-cgroup`):
// each goes through a pidfd to the process a record names by pid and start time, and never to a
// process that took the pid since. Real processes; each test ends what it started.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'dist/bin/durable-bash-supervisor');

const started: ChildProcess[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-(child.pid as number), 'SIGKILL');
      await once(child, 'exit');
    }
  }
});

/** A process group of its own: a shell and a background sleep. */
function startGroup(): ChildProcess {
  const child = spawn('bash', ['-c', 'sleep 300 & sleep 300; wait'], { detached: true, stdio: 'ignore' });
  started.push(child);
  return child;
}

const startTime = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The group's members, from /proc. */
const membersOf = (group: number) =>
  spawnSync('pgrep', ['-g', String(group)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);
const run = (...args: string[]) => spawnSync(bin, args, { stdio: 'ignore' }).status;

describe('durable-bash-supervisor --signal, --signal-group, --kill-cgroup', () => {
  it('signals the process a pid and start time name, and refuses one whose start time differs', async () => {
    const child = startGroup();
    const pid = child.pid as number;
    await waitFor(() => membersOf(pid).length === 3);
    const start = startTime(pid);
    expect(run('--signal', String(pid), String(start + 1), String(constants.signals.SIGTERM))).toBe(3);
    expect(alive(pid)).toBe(true);
    expect(run('--signal', String(pid), String(start), String(constants.signals.SIGTERM))).toBe(0);
    await once(child, 'exit');
    // Gone: its pid names no process of that start time any more.
    expect(run('--signal', String(pid), String(start), '0')).toBe(3);
    process.kill(-pid, 'SIGKILL');
    await waitFor(() => membersOf(pid).length === 0);
  });

  it("signals a leader's whole group, only while that leader is the one recorded", async () => {
    const child = startGroup();
    const pid = child.pid as number;
    await waitFor(() => membersOf(pid).length === 3);
    const start = startTime(pid);
    expect(run('--signal-group', String(pid), String(start + 1), String(constants.signals.SIGKILL))).toBe(3);
    expect(membersOf(pid)).toHaveLength(3);
    expect(run('--signal-group', String(pid), String(start), String(constants.signals.SIGKILL))).toBe(0);
    await once(child, 'exit');
    await waitFor(() => membersOf(pid).length === 0);
  });

  it("kills every process in a task's cgroup, each through a pidfd", async () => {
    // A cgroup of the test's own in a hierarchy this host lets root write (v2, else v1's pids).
    const hierarchy = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup/pids', '/sys/fs/cgroup'].find((dir) =>
      existsSync(path.join(dir, 'cgroup.procs')),
    );
    if (hierarchy === undefined) throw new Error('no cgroup hierarchy on this host');
    const dir = path.join(hierarchy, `durable-bash-test-${randomUUID()}`);
    mkdirSync(dir);
    try {
      const inside = startGroup();
      const outside = startGroup();
      const pid = inside.pid as number;
      await waitFor(() => membersOf(pid).length === 3);
      for (const member of membersOf(pid)) writeFileSync(path.join(dir, 'cgroup.procs'), String(member));
      expect(run('--kill-cgroup', dir)).toBe(0);
      await once(inside, 'exit');
      await waitFor(() => membersOf(pid).length === 0);
      expect(alive(outside.pid as number)).toBe(true);
    } finally {
      await waitFor(() => readFileSync(path.join(dir, 'cgroup.procs'), 'utf8') === '');
      rmdirSync(dir);
    }
  });
});
