// The per-command supervisor (supervisor/), tested as the worker will use it: real
// processes, real signals, real files; no mocks. Every test kills only what it started and checks
// that nothing it started is left.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EndRecord, SupervisorRecord } from '../../src/command-host/supervisor/supervisor-records.js';
import { waitFor } from '../helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'dist/bin/durable-bash-supervisor');
/** Blocks until the test creates the file `gate` in the command's cwd. */
const gateWait = 'while [ ! -e gate ]; do sleep 0.02; done';

/** The records as the supervisor writes them: the worker's shapes (src/command-host/supervisor/supervisor.ts) plus a version. */
type StateRecord = SupervisorRecord & { v: number };
type ExitRecord = EndRecord & { v: number };

interface Run {
  child: ChildProcess;
  pid: number;
  stateFile: string;
  exitFile: string;
  outFile: string;
  errFile: string;
  /** Everything the supervisor wrote on fd 3, once it closed it. */
  report: Promise<string>;
  /** The supervisor's own exit code. */
  exited: Promise<number | null>;
}

let dir: string;
/** Pids this test started (supervisors, commands, grandchildren), with their start times. */
let started: Array<{ pid: number; start: string }>;

/** Field 22 of /proc/<pid>/stat, or undefined once the pid is gone or a zombie. */
function procStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** Field 5 (process group) of /proc/<pid>/stat. */
function procGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function track(pid: number): void {
  const start = procStart(pid);
  if (start !== undefined) started.push({ pid, start });
}

/** Live processes this test started: tracked pids, and any process whose command line names the
 * test's directory (supervisors, and a forked child killed before it could exec). */
function leftovers(): number[] {
  const alive = new Set(started.filter((p) => procStart(p.pid) === p.start).map((p) => p.pid));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(dir) && procStart(Number(entry)) !== undefined) alive.add(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return [...alive];
}

interface Options {
  stateFile?: string;
  /** Options before the state file (`--stdin <fifo>`, ...). */
  flags?: string[];
  /** Runs the supervisor through `bash -c '<prefix>; exec supervisor ...'`, e.g. to make it
   * inherit ignored signals (the supervisor's pid is then bash's, which execs it). */
  prefix?: string;
}

function supervise(name: string, program: string[], options: Options = {}): Run {
  const stateFile = options.stateFile ?? path.join(dir, `${name}.state`);
  const exitFile = path.join(dir, `${name}.exit`);
  const outFile = path.join(dir, `${name}.out`);
  const errFile = path.join(dir, `${name}.err`);
  const out = openSync(outFile, 'a');
  const err = openSync(errFile, 'a');
  const args = [...(options.flags ?? []), stateFile, exitFile, '--', ...program];
  const [file, argv] = options.prefix
    ? ['bash', ['-c', `${options.prefix}; exec "$0" "$@"`, bin, ...args]]
    : [bin, args];
  const child = spawn(file, argv, {
    cwd: dir,
    detached: true,
    stdio: ['ignore', out, err, 'pipe'],
  });
  closeSync(out);
  closeSync(err);
  if (child.pid === undefined) throw new Error('spawn failed');
  track(child.pid);
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const pipe = child.stdio[3];
  if (!pipe) throw new Error('no report pipe');
  const report = new Promise<string>((resolve) => {
    let text = '';
    pipe.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    pipe.on('close', () => resolve(text));
  });
  return { child, pid: child.pid, stateFile, exitFile, outFile, errFile, report, exited };
}

function bash(name: string, command: string, options: Options = {}): Run {
  return supervise(name, ['bash', '-c', command], options);
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** The state record once it names the command (pid > 0); tracks the command's pid. */
async function commandStarted(run: Run): Promise<StateRecord> {
  let record: StateRecord | undefined;
  await waitFor(() => {
    try {
      record = readJson<StateRecord>(run.stateFile);
    } catch {
      return false;
    }
    return record.pid > 0;
  });
  if (!record) throw new Error('unreachable');
  track(record.pid);
  return record;
}

async function finished(run: Run): Promise<ExitRecord> {
  expect(await run.exited).toBe(0);
  return readJson<ExitRecord>(run.exitFile);
}

function openGate(): void {
  writeFileSync(path.join(dir, 'gate'), '');
}

beforeAll(() => {
  // Idempotent: compiles only when the binary is missing or older than its source.
  execFileSync('bash', [path.join(root, 'scripts/build-supervisor.sh')], { stdio: 'inherit' });
}, 300_000);

beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-supervisor-')));
  started = [];
});

afterEach(async () => {
  let left: number[] = [];
  try {
    await waitFor(() => {
      left = leftovers();
      return left.length === 0;
    }, 5_000);
  } catch {
    for (const pid of left) process.kill(pid, 'SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
  expect(left, 'processes left behind').toEqual([]);
});

describe('durable-bash-supervisor', () => {
  it('runs the command with its output in the files and records pids and start times that match /proc', async () => {
    const before = Date.now();
    const run = bash('main', `echo out; echo err >&2; ${gateWait}; exit 7`);
    const state = await commandStarted(run);

    expect(state).toEqual({
      v: 1,
      supervisorPid: run.pid,
      supervisorStart: Number(procStart(run.pid)),
      bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      pid: state.pid,
      pidStart: Number(procStart(state.pid)),
      startedAtMs: state.startedAtMs,
    });
    expect(state.startedAtMs).toBeGreaterThanOrEqual(before);
    expect(state.startedAtMs).toBeLessThanOrEqual(Date.now());
    // The command leads its own group, in the command's cwd; the supervisor leads its session and
    // no longer holds the spill files.
    expect(procGroup(state.pid)).toBe(state.pid);
    expect(readlinkSync(`/proc/${state.pid}/cwd`)).toBe(dir);
    expect(procGroup(run.pid)).toBe(run.pid);
    // The supervisor lets go of the spill files before it closes fd 3.
    expect(await run.report).toBe(`started ${state.pid}\n`);
    expect(readlinkSync(`/proc/${run.pid}/fd/1`)).toBe('/dev/null');
    expect(readlinkSync(`/proc/${run.pid}/fd/2`)).toBe('/dev/null');

    openGate();
    const end = await finished(run);
    expect(end).toEqual({ v: 1, exitCode: 7, endedAtMs: end.endedAtMs, stopped: false });
    expect(end.endedAtMs).toBeGreaterThanOrEqual(state.startedAtMs);
    expect(readFileSync(run.outFile, 'utf8')).toBe('out\n');
    expect(readFileSync(run.errFile, 'utf8')).toBe('err\n');
    expect(readdirSync(dir).filter((f) => f.includes('.tmp.'))).toEqual([]);
  });

  it('records `exit 143` as exitCode 143 and death by SIGTERM as signal 15', async () => {
    const exited = bash('exit143', 'exit 143');
    const killed = bash('sigterm', 'kill -TERM $$');
    const [a, b] = [await finished(exited), await finished(killed)];
    expect(a).toEqual({ v: 1, exitCode: 143, endedAtMs: a.endedAtMs, stopped: false });
    expect(b).toEqual({ v: 1, signal: 15, endedAtMs: b.endedAtMs, stopped: false });
  });

  it('forwards SIGTERM to a command that traps it', async () => {
    const run = bash('trap', `trap 'echo got; exit 3' TERM; echo ready; while :; do sleep 0.02; done`);
    await commandStarted(run);
    await waitFor(() => readFileSync(run.outFile, 'utf8').includes('ready'));
    process.kill(run.pid, 'SIGTERM');
    const end = await finished(run);
    expect(end).toEqual({ v: 1, exitCode: 3, endedAtMs: end.endedAtMs, stopped: true });
    expect(readFileSync(run.outFile, 'utf8')).toBe('ready\ngot\n');
  });

  it('resets signal dispositions it inherits: ignored CHLD and TERM from its spawner', async () => {
    const run = bash('inherited', 'sleep 1000', { prefix: `trap '' CHLD TERM` });
    const state = await commandStarted(run);
    expect(await run.report).toBe(`started ${state.pid}\n`);
    process.kill(run.pid, 'SIGTERM');
    const end = await finished(run);
    expect(end).toEqual({ v: 1, signal: 15, endedAtMs: end.endedAtMs, stopped: true });
  });

  it('SIGUSR1 kills a command that ignores TERM, and its background grandchild', async () => {
    const run = bash(
      'usr1',
      `trap '' TERM; sleep 1000 & echo $! > grandchild.pid; echo ready; while :; do sleep 0.02; done`,
    );
    const state = await commandStarted(run);
    await waitFor(() => readFileSync(run.outFile, 'utf8').includes('ready'));
    const grandchild = Number(readFileSync(path.join(dir, 'grandchild.pid'), 'utf8'));
    track(grandchild);
    expect(procGroup(grandchild)).toBe(state.pid);

    process.kill(run.pid, 'SIGTERM'); // ignored by the shell; its `sleep 0.02` may die of it
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(procStart(state.pid)).toBe(String(state.pidStart));
    process.kill(run.pid, 'SIGUSR1');
    const end = await finished(run);
    expect(end).toEqual({ v: 1, signal: 9, endedAtMs: end.endedAtMs, stopped: true });
    await waitFor(() => procStart(grandchild) === undefined);
  });

  it('records a kill that came after the command ended on its own as not its end (stopped: false)', async () => {
    // The leader exits 4 and leaves a child that ignores TERM: the supervisor follows it through
    // the grace, and a kill then only ends the leftover.
    const run = bash(
      'after-end',
      // It exits once the child ignores TERM: the supervisor's TERM to leftovers must not beat the trap.
      `(trap '' TERM; echo $BASHPID > leftover.pid; exec sleep 1000) & until [ -s leftover.pid ]; do sleep 0.01; done; exit 4`,
      { flags: ['--grace-ms', '30000'] },
    );
    const state = await commandStarted(run);
    const leftover = path.join(dir, 'leftover.pid');
    await waitFor(() => existsSync(leftover) && readFileSync(leftover, 'utf8').endsWith('\n'));
    track(Number(readFileSync(leftover, 'utf8')));
    await waitFor(() => procStart(state.pid) === undefined);
    expect(existsSync(run.exitFile)).toBe(false);
    process.kill(run.pid, 'SIGTERM');
    const end = await finished(run);
    expect(end).toEqual({ v: 1, exitCode: 4, endedAtMs: end.endedAtMs, stopped: false });
  });

  it('a second supervisor on the same state file exits 100 and runs nothing', async () => {
    const command = `echo ran >> marker; ${gateWait}`;
    const first = bash('first', command);
    await commandStarted(first);
    const claim = readFileSync(first.stateFile, 'utf8');
    const second = bash('second', command, { stateFile: first.stateFile });
    expect(await second.exited).toBe(100);
    expect(await second.report).toBe('claimed\n');
    expect(existsSync(second.exitFile)).toBe(false);
    expect(readFileSync(first.stateFile, 'utf8')).toBe(claim);

    openGate();
    expect((await finished(first)).exitCode).toBe(0);
    expect(readFileSync(path.join(dir, 'marker'), 'utf8')).toBe('ran\n');
  });

  it('a state file left by another process (a tombstone) makes it exit 100', async () => {
    const stateFile = path.join(dir, 'tomb.state');
    writeFileSync(stateFile, '{"v":1,"tombstone":true}\n');
    const run = bash('tomb', 'echo ran >> marker', { stateFile });
    expect(await run.exited).toBe(100);
    expect(await run.report).toBe('claimed\n');
    expect(existsSync(path.join(dir, 'marker'))).toBe(false);
    expect(existsSync(run.exitFile)).toBe(false);
    expect(readFileSync(stateFile, 'utf8')).toBe('{"v":1,"tombstone":true}\n');
  });

  it('reports a missing program as exitCode 127 with the error', async () => {
    const run = supervise('missing', ['durable-bash-no-such-program']);
    const state = await commandStarted(run);
    expect(await run.report).toBe(`started ${state.pid} exec-error No such file or directory\n`);
    const end = await finished(run);
    expect(end).toEqual({
      v: 1,
      exitCode: 127,
      endedAtMs: end.endedAtMs,
      stopped: false,
      error: 'No such file or directory',
    });
  });

  it('reports a setup error on fd 3 and fd 2 and exits 101', async () => {
    const run = bash('setup', 'echo ran >> marker', { stateFile: path.join(dir, 'no-such-dir', 'x.state') });
    expect(await run.exited).toBe(101);
    expect(await run.report).toMatch(
      /^error cannot claim .*no-such-dir\/x\.state: No such file or directory\n$/,
    );
    expect(readFileSync(run.errFile, 'utf8')).toMatch(/^durable-bash-supervisor: cannot claim /);
    expect(existsSync(path.join(dir, 'marker'))).toBe(false);
  });

  it('survives the death of the process that spawned it', async () => {
    // A short-lived spawner (as a worker would be), with no report pipe: fd 3 is not open.
    const stateFile = path.join(dir, 'orphan.state');
    const exitFile = path.join(dir, 'orphan.exit');
    const script = `
      const { spawn } = require('node:child_process');
      const fs = require('node:fs');
      const out = fs.openSync('orphan.out', 'a');
      const child = spawn(${JSON.stringify(bin)}, [${JSON.stringify(stateFile)}, ${JSON.stringify(exitFile)},
        '--', 'bash', '-c', ${JSON.stringify(`${gateWait}; echo done; exit 5`)}],
        { detached: true, stdio: ['ignore', out, out] });
      console.log(child.pid);
      setInterval(() => {}, 1000);`;
    const spawner = spawn(process.execPath, ['-e', script], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (spawner.pid === undefined) throw new Error('spawn failed');
    track(spawner.pid);
    if (!spawner.stdout) throw new Error('no stdout');
    const [line] = (await once(spawner.stdout, 'data')) as [Buffer];
    const supervisorPid = Number(line.toString().trim());
    track(supervisorPid);
    await waitFor(() => existsSync(stateFile) && readJson<StateRecord>(stateFile).pid > 0);
    track(readJson<StateRecord>(stateFile).pid);

    spawner.kill('SIGKILL');
    await once(spawner, 'exit');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(procStart(supervisorPid)).toBeDefined();
    openGate();
    await waitFor(() => existsSync(exitFile));
    const end = readJson<ExitRecord>(exitFile);
    expect(end).toEqual({ v: 1, exitCode: 5, endedAtMs: end.endedAtMs, stopped: false });
    expect(readFileSync(path.join(dir, 'orphan.out'), 'utf8')).toBe('done\n');
  });

  it('never runs the command without a full state record when SIGKILLed right after spawn (20 runs)', async () => {
    const outcomes = { notRun: 0, ranOrphaned: 0, finished: 0 };
    for (let i = 0; i < 20; i++) {
      const marker = path.join(dir, `marker-${i}`);
      const run = bash(`kill-${i}`, `echo ran > ${marker}; sleep 0.05`);
      // Spread the kill over the supervisor's first 20 ms (claim, fork, record, go: 5-15 ms with fsync).
      const t0 = process.hrtime.bigint();
      while (process.hrtime.bigint() - t0 < BigInt(i * 1_000_000)) {
        // busy-wait
      }
      process.kill(run.pid, 'SIGKILL');
      await run.exited;
      // The forked child (its command line names this directory until it execs, and the command's
      // does after) ends on its own: EOF on the go pipe, or the command finishing.
      await waitFor(() => leftovers().length === 0);
      let state: StateRecord | undefined;
      try {
        state = readJson<StateRecord>(run.stateFile);
      } catch {
        state = undefined; // killed before the claim
      }
      if (!existsSync(marker)) {
        outcomes.notRun++;
        expect(existsSync(run.exitFile)).toBe(false);
        continue;
      }
      expect(state?.pid, `run ${i} ran without a full state record`).toBeGreaterThan(0);
      if (existsSync(run.exitFile)) outcomes.finished++;
      else outcomes.ranOrphaned++;
    }
    // At least some kills landed before the supervisor was done.
    expect(outcomes.finished, JSON.stringify(outcomes)).toBeLessThan(20);
  });
});

describe('durable-bash-supervisor --tty', () => {
  function writeFifo(fifo: string, text: string): number {
    const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      return writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  }

  it('runs the command on a terminal of the given size, which it leads, relaying what it shows', async () => {
    const run = bash(
      'tty',
      'test -t 0 && test -t 1 && test -t 2 && echo terminal; stty size; ps -o sid=,tty= -p $$ | tr -s " "; echo err >&2',
      { flags: ['--tty', '100x30', '--output-max', '1000000'] },
    );
    const record = await commandStarted(run);
    expect(await finished(run)).toMatchObject({ exitCode: 0 });
    // A terminal ends lines with CR LF; stderr is the terminal too, so nothing reaches the stderr file.
    const [terminal, size, session, err] = readFileSync(run.outFile, 'utf8').split('\r\n');
    expect([terminal, size, err]).toEqual(['terminal', '30 100', 'err']);
    expect(session?.trim()).toMatch(new RegExp(`^${record.pid} pts/\\d+$`));
    expect(readFileSync(run.errFile, 'utf8')).toBe('');
  });

  it("takes the FIFO's bytes as typing: Ctrl-C reaches the command as SIGINT through the terminal", async () => {
    const fifo = path.join(dir, 'tty.stdin');
    const run = bash(
      'tty-keys',
      'trap \'echo "got INT"; exit 3\' INT; read -r line; echo "read $line"; echo ready; while :; do sleep 0.05; done',
      { flags: ['--tty', '80x24', '--output-max', '1000000', '--stdin', fifo] },
    );
    await commandStarted(run);
    expect(writeFifo(fifo, 'hello\r')).toBe(6);
    await waitFor(() => readFileSync(run.outFile, 'utf8').includes('ready'));
    expect(writeFifo(fifo, '\x03')).toBe(1);
    expect(await finished(run)).toMatchObject({ exitCode: 3 });
    // The terminal echoes what is typed (and ^C for Ctrl-C), as it would to a person.
    expect(readFileSync(run.outFile, 'utf8')).toBe('hello\r\nread hello\r\nready\r\n^Cgot INT\r\n');
    expect(existsSync(fifo)).toBe(false);
  });

  it('resizes the terminal on SIGWINCH to the size its resize file holds, and records each size where it began', async () => {
    const events = path.join(dir, 'tty.events');
    const resize = path.join(dir, 'tty.resize');
    const run = bash('tty-resize', "trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done", {
      flags: ['--tty', '80x24', '--output-max', '1000000', '--tty-events', events, '--tty-resize', resize],
    });
    await commandStarted(run);
    await waitFor(() => readFileSync(run.outFile, 'utf8') === 'ready\r\n');
    writeFileSync(resize, '100x30');
    process.kill(run.pid, 'SIGWINCH');
    await waitFor(() => readFileSync(run.outFile, 'utf8').includes('30 100'));
    // Nothing valid, or the same size: no change, no record.
    writeFileSync(resize, 'wide');
    process.kill(run.pid, 'SIGWINCH');
    writeFileSync(resize, '100x30');
    process.kill(run.pid, 'SIGWINCH');
    process.kill(run.pid, 'SIGTERM');
    expect(await finished(run)).toMatchObject({ signal: 15 });
    expect(readFileSync(run.outFile, 'utf8')).toBe('ready\r\n30 100\r\n');
    // The output before the resize (7 bytes) was shown at 80x24, what follows at 100x30.
    expect(readFileSync(events, 'utf8')).toBe('0 80x24\n7 100x30\n');
    expect(statSync(events).mode & 0o777).toBe(0o600);
  });

  it("passes the terminal through a launcher, where the inner supervisor makes it the command's", async () => {
    const fifo = path.join(dir, 'launched.stdin');
    const launcher = ['bwrap', '--die-with-parent', '--new-session', '--unshare-pid', '--as-pid-1'];
    const sandbox = ['--bind', '/', '/', '--dev', '/dev', '--proc', '/proc', bin, '--inner', '--tty', '--'];
    const script =
      'test -t 0 && test -t 1 && echo terminal; stty size; trap \'echo "got INT"; exit 3\' INT; echo ready; while :; do sleep 0.05; done';
    const run = supervise('tty-launched', [...launcher, ...sandbox, 'bash', '-c', script], {
      flags: ['--tty', '90x20', '--output-max', '1000000', '--stdin', fifo, '--sandboxed'],
    });
    await commandStarted(run);
    await waitFor(() => readFileSync(run.outFile, 'utf8').includes('ready'));
    expect(writeFifo(fifo, '\x03')).toBe(1);
    // The exact status comes from the inner supervisor: Ctrl-C reached the command in its sandbox.
    expect(await finished(run)).toMatchObject({ exitCode: 3 });
    expect(readFileSync(run.outFile, 'utf8')).toBe('terminal\r\n20 90\r\nready\r\n^Cgot INT\r\n');
  });

  it("answers a program's questions to its terminal (device attributes and status) as an xterm does", async () => {
    // A shell line that sends `query` to its terminal, reads the answer up to `end`, and prints both.
    const ask = (query: string, end: string) =>
      `printf '${query}'; IFS= read -rs -d ${end} reply; echo "${query.replace('\\e', 'ESC')} ${'${reply:1}'}${end}"`;
    const run = bash(
      'tty-queries',
      `stty -echo; ${ask('\\e[c', 'c')}; ${ask('\\e[>c', 'c')}; ${ask('\\e[5n', 'n')}`,
      {
        flags: ['--tty', '80x24', '--output-max', '1000000'],
      },
    );
    expect(await finished(run)).toMatchObject({ exitCode: 0 });
    // The queries themselves reach the output (the log); each answer came back as input.
    const lines = readFileSync(run.outFile, 'utf8')
      .split('\r\n')
      .map((line) => line.replace(/^.*?ESC/, 'ESC'));
    expect(lines).toEqual(['ESC[c [?1;2c', 'ESC[>c [>0;276;0c', 'ESC[5n [0n', '']);
  });

  it('refuses a size it cannot take, and a terminal without a relay, in one line', async () => {
    for (const [flags, message] of [
      [['--tty', '80', '--output-max', '10'], '--tty needs <cols>x<rows>, each from 2 to 1000, got 80'],
      [['--tty', '80x24'], "--tty needs --output-max (the terminal's output is relayed)"],
    ] as const) {
      const run = bash(`tty-bad-${flags.length}`, 'true', { flags: [...flags] });
      expect(await run.exited).toBe(101);
      expect(readFileSync(run.errFile, 'utf8')).toContain(message);
      expect(existsSync(run.exitFile)).toBe(false);
    }
  });
});

describe('durable-bash-supervisor --stdin', () => {
  /** Writes to the FIFO as the worker will: without blocking, nothing if no reader holds it. */
  function writeFifo(fifo: string, text: string): number {
    const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      return writeSync(fd, text);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return 0; // full
      throw err;
    } finally {
      closeSync(fd);
    }
  }

  it("feeds the command's stdin from a private FIFO, and closes it (EOF) on SIGUSR2", async () => {
    const fifo = path.join(dir, 'task.stdin');
    const run = bash('stdin', 'while read -r line; do echo "got $line"; done; echo eof', {
      flags: ['--stdin', fifo],
    });
    await commandStarted(run);
    expect(statSync(fifo).mode & 0o777).toBe(0o600);
    expect(writeFifo(fifo, 'one\n')).toBe(4);
    expect(writeFifo(fifo, 'two\nthree\n')).toBe(10);
    await waitFor(() => readFileSync(run.outFile, 'utf8').includes('got three'));
    process.kill(run.pid, 'SIGUSR2');
    expect(await finished(run)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(run.outFile, 'utf8')).toBe('got one\ngot two\ngot three\neof\n');
    // Closed: the FIFO is gone, so a later writer learns it.
    expect(existsSync(fifo)).toBe(false);
  });

  it('removes the FIFO when the command closes its stdin, and when it ends', async () => {
    const fifo = path.join(dir, 'closing.stdin');
    const run = bash('closing', `exec 0<&-; ${gateWait}`, { flags: ['--stdin', fifo] });
    await commandStarted(run);
    // The command closing its stdin ends the FIFO at once (POLLERR on the pipe), with no write needed.
    await waitFor(() => !existsSync(fifo));
    openGate();
    await finished(run);
    const ended = bash('ended', 'true', { flags: ['--stdin', path.join(dir, 'ended.stdin')] });
    await finished(ended);
    expect(existsSync(path.join(dir, 'ended.stdin'))).toBe(false);
  });

  it('keeps running, and ends on a kill, when the command never reads what it is sent', async () => {
    const fifo = path.join(dir, 'full.stdin');
    const run = bash('full', 'sleep 600', { flags: ['--stdin', fifo] });
    await commandStarted(run);
    // 64 KiB fills the FIFO; the supervisor moves it on until the command's stdin pipe is full.
    let written = 0;
    for (let i = 0; i < 8; i++) {
      written += writeFifo(fifo, 'x'.repeat(65536));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // What is held is bounded by the two pipes (the FIFO's and the command's stdin), not the writes.
    expect(written).toBeGreaterThanOrEqual(65536);
    expect(written).toBeLessThan(8 * 65536);
    process.kill(run.pid, 'SIGUSR1');
    expect(await finished(run)).toMatchObject({ signal: 9 });
  });
});
