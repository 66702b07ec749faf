import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { supervisorPath } from '../../../src/command-host/supervisor/supervisor.js';
import { SupervisorNursery } from '../../../src/command-host/supervisor/supervisor-nursery.js';
import { readEnd, readRecord } from '../../../src/command-host/supervisor/supervisor-records.js';
import { taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import { waitFor } from '../../helpers/processes.js';

// The nursery against real supervisors, without a worker: what a launch starts, what it reports,
// and that nothing of it outlives its close. Cgroups are covered by the containment tests.
// An output cap no other test uses tells this file's supervisors apart in `ps`.
const limits = { outputBytesPerStream: 1_048_577, processes: 0, memoryBytes: 0 };
const ours = () =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('--output-max 1048577'))
    .map((line) => Number(line.trim().split(' ')[0]));
const nurseries: SupervisorNursery[] = [];
let serial = 0;

function nursery(warm = 2, cgroupParents: string[] = [], spillDir?: string) {
  const made = new SupervisorNursery({
    binary: supervisorPath(),
    cgroupParents,
    limits,
    warm,
    ...(spillDir !== undefined ? { spillDir } : {}),
  });
  nurseries.push(made);
  return made;
}

function task(dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-nursery-'))) {
  return taskFiles(dir, `bash-00000000-0000-4000-8000-${String(++serial).padStart(12, '0')}`);
}

/** Launches `command` in `files` through `made`, as a worker does, and waits for its end: the end record and stdout. */
async function launchToEnd(made: SupervisorNursery, files: ReturnType<typeof task>, command: string) {
  const report = await made.launch({ files, command, cwd: '/', env: process.env });
  expect(report.kind).toBe('started');
  await (report as { exited: Promise<void> }).exited;
  return { end: await readEnd(files.exit), stdout: readFileSync(files.stdout, 'utf8') };
}

/** The unnamed files (O_TMPFILE) in `dir` that processes of this file hold open: `<dir>/#<inode> (deleted)`. */
function unnamedIn(dir: string): string[] {
  return ours().flatMap((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`)
        .map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`))
        .filter((target) => target.startsWith(`${dir}/#`));
    } catch {
      return []; // It exited meanwhile.
    }
  });
}

afterEach(async () => {
  await Promise.all(nurseries.splice(0).map((made) => made.close()));
  await waitFor(() => ours().length === 0, 5_000);
});

describe('the supervisor nursery', () => {
  it('runs a command in its workdir with exactly the environment given and stdin from /dev/null', async () => {
    const files = task();
    const report = await nursery().launch({
      files,
      command: 'pwd; echo "$ONLY"; env | wc -l; readlink /proc/self/fd/0; ls /proc/$$/fd; true',
      cwd: '/usr',
      env: { ONLY: 'this', PATH: '/usr/bin:/bin' },
    });
    expect(report.kind).toBe('started');
    await (report as { exited: Promise<void> }).exited;
    expect(await readEnd(files.exit)).toMatchObject({ exitCode: 0 });
    // bash adds PWD, SHLVL and _ of its own.
    expect(readFileSync(files.stdout, 'utf8')).toBe('/usr\nthis\n5\n/dev/null\n0\n1\n2\n');
    expect(statSync(files.stdout).mode & 0o777).toBe(0o600);
    expect((await readRecord(files.state))?.pid).toBeGreaterThan(0);
  });

  // With the spill directory the claim is a link of a file made while warm: lost the same way.
  it.each([
    ['', false],
    [' (its files made while warm)', true],
  ])('refuses a task whose state file is taken, and starts nothing%s', async (_, warmFiles) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-nursery-'));
    const files = task(dir);
    const made = nursery(2, [], warmFiles ? dir : undefined);
    const first = await made.launch({ files, command: 'echo once', cwd: '/', env: process.env });
    expect(first.kind).toBe('started');
    expect(await made.launch({ files, command: 'echo twice', cwd: '/', env: process.env })).toEqual({
      kind: 'claimed',
    });
    await (first as { exited: Promise<void> }).exited;
    expect(readFileSync(files.stdout, 'utf8')).toBe('once\n');
    expect(await readEnd(files.exit)).toMatchObject({ exitCode: 0 });
  });

  it('answers a command past the kernel argument limit as a failed spawn', async () => {
    const report = await nursery().launch({
      files: task(),
      command: `echo ${'x'.repeat(200_000)}`,
      cwd: '/',
      env: process.env,
    });
    expect(report).toEqual({ kind: 'error', message: 'spawn E2BIG' });
  });

  it('makes the stdin FIFO for a task that keeps stdin open', async () => {
    const files = task();
    const report = await nursery().launch({
      files,
      command: 'cat',
      cwd: '/',
      env: process.env,
      keepStdinOpen: true,
    });
    expect(report.kind).toBe('started');
    expect(statSync(files.stdin).isFIFO()).toBe(true);
    execFileSync('bash', ['-c', `echo fed > '${files.stdin}'`]);
    const record = await readRecord(files.state);
    process.kill(record?.supervisorPid ?? 0, 'SIGUSR2'); // Close stdin once drained: cat ends.
    await (report as { exited: Promise<void> }).exited;
    expect(readFileSync(files.stdout, 'utf8')).toBe('fed\n');
  });

  it('answers a setup error of its supervisors, and does not fork in a loop when they cannot start', async () => {
    const report = await nursery(2, ['/nonexistent-durable-bash-cgroups']).launch({
      files: task(),
      command: 'true',
      cwd: '/',
      env: process.env,
    });
    expect(report).toEqual({
      kind: 'error',
      message: expect.stringMatching(
        /^cannot make cgroup \/nonexistent-durable-bash-cgroups\/warm-\d+-\d+: No such file or directory$/,
      ),
    });
    // Warm supervisors that die are not replaced at once: a second later there are few forks.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(ours().length).toBeLessThanOrEqual(3);
  });

  it('starts again after it was killed, and a closed nursery leaves no supervisor behind', async () => {
    const made = nursery();
    const files = task();
    expect((await made.launch({ files, command: 'true', cwd: '/', env: process.env })).kind).toBe('started');
    // The nursery is the oldest of them; its warm supervisors are its forks.
    const [nurseryPid] = ours().sort((a, b) => a - b);
    process.kill(nurseryPid ?? 0, 'SIGKILL');
    // Its warm supervisors see their task pipe close, and end.
    await waitFor(() => ours().length === 0, 5_000);
    const again = task();
    expect((await made.launch({ files: again, command: 'echo back', cwd: '/', env: process.env })).kind).toBe(
      'started',
    );
    await made.close();
    await waitFor(() => ours().length === 0, 5_000);
    expect(existsSync(again.exit)).toBe(true);
  });

  it('watches a supervisor another nursery started, and says when it exits; a gone or reused pid at once', async () => {
    const files = task();
    const first = nursery(0);
    const report = await first.launch({
      files,
      command: 'read -r line < /dev/stdin; exit 7',
      cwd: '/',
      env: process.env,
      keepStdinOpen: true,
    });
    expect(report.kind).toBe('started');
    const record = await readRecord(files.state);
    const supervisor = { pid: record?.supervisorPid ?? 0, start: record?.supervisorStart ?? 0 };
    // A second nursery, as a restarted worker's, holds a pidfd on it.
    const second = nursery(0);
    let outcome: string | undefined;
    const watched = second.watchExit(supervisor.pid, supervisor.start).then((o) => {
      outcome = o;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(outcome).toBeUndefined();
    process.kill(supervisor.pid, 'SIGTERM');
    await watched;
    expect(outcome).toBe('exited');
    expect(await second.watchExit(supervisor.pid, supervisor.start)).toBe('exited');
    // A pid that is some other process now (its start time differs): not the one watched.
    expect(await second.watchExit(process.pid, 1)).toBe('exited');
  });

  it('ends a watch as unwatched when its nursery dies, so the caller polls', async () => {
    const files = task();
    const first = nursery(0);
    const report = await first.launch({ files, command: 'sleep 30', cwd: '/', env: process.env });
    expect(report.kind).toBe('started');
    const record = await readRecord(files.state);
    const second = nursery(0);
    const watched = second.watchExit(record?.supervisorPid ?? 0, record?.supervisorStart ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Kill the second nursery (its process, as a crash would).
    const child = (second as unknown as { child: { pid: number } }).child;
    process.kill(child.pid, 'SIGKILL');
    expect(await watched).toBe('unwatched');
    process.kill(record?.supervisorPid ?? 0, 'SIGTERM');
    for (let i = 0; i < 100 && (await readEnd(files.exit)) === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await readEnd(files.exit)).toMatchObject({ signal: 15 });
  });

  describe('with the spill directory (a warm supervisor makes the files of its task before the task)', () => {
    it('holds them unnamed while warm and names them for the task: the same files and records', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-nursery-'));
      const made = nursery(1, [], dir);
      const files = task(dir);
      const { end, stdout } = await launchToEnd(made, files, 'echo out; echo err >&2; exit 3');
      expect(end).toMatchObject({ exitCode: 3 });
      expect(stdout).toBe('out\n');
      expect(readFileSync(files.stderr, 'utf8')).toBe('err\n');
      expect((await readRecord(files.state))?.pid).toBeGreaterThan(0);
      for (const file of [files.stdout, files.stderr, files.state, files.exit]) {
        const stat = statSync(file);
        expect([stat.isFile(), stat.mode & 0o777, stat.nlink]).toEqual([true, 0o600, 1]);
      }
      // Nothing but the task's files, no temporary names left behind.
      expect(readdirSync(dir).sort()).toEqual(
        [files.exit, files.state, files.stderr, files.stdout].map((file) => path.basename(file)).sort(),
      );
      // The next warm supervisor holds its four already (stdout, stderr, the claim, the end).
      await waitFor(() => unnamedIn(dir).length === 4, 5_000);
    });

    it('opens a spill file an attempt that started nothing left, as before', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-nursery-'));
      const files = task(dir);
      writeFileSync(files.stdout, '', { mode: 0o600 });
      expect((await launchToEnd(nursery(1, [], dir), files, 'echo here')).stdout).toBe('here\n');
    });

    it('runs tasks as before where it cannot make them (its directory gone)', async () => {
      const gone = path.join(os.tmpdir(), 'durable-bash-nursery-gone', 'spill');
      const { end, stdout } = await launchToEnd(nursery(1, [], gone), task(), 'echo fine');
      expect(end).toMatchObject({ exitCode: 0 });
      expect(stdout).toBe('fine\n');
    });
  });
});
