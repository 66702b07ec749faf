/** What the bench reads of this host: /proc, the supervisors' records, the tools' answers. */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { procStat } from '../../src/command-host/supervisor/process-identity.js';
import {
  isSameProcess,
  type SupervisorRecord,
} from '../../src/command-host/supervisor/supervisor-records.js';
import type { Tool, ToolExecContext, ToolResult } from '../../src/shared/tool-types.js';
import { startWorkerProcess, type WorkerProcess } from '../../test/helpers/worker-process.js';
import type { BenchServer } from './server.js';

export const text = (result: ToolResult) => result.content.map((block) => block.text).join('');
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** The floor of every latency: a direct spawn of `bash -c <command>`, to its exit. */
export function directSpawn(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn('bash', ['-c', command], { stdio: 'ignore' })
      .on('exit', () => resolve())
      .on('error', reject);
  });
}

export type Tools = Record<'bash' | 'bash_output' | 'bash_kill' | 'bash_input', Tool>;

/** Starts `command` in the background (with `extra` arguments, in the context `exec`); its task id. */
export async function startBackground(
  tools: Pick<Tools, 'bash'>,
  command: string,
  extra: Record<string, unknown> = {},
  exec: ToolExecContext = {},
): Promise<string> {
  const result = await tools.bash.execute(
    { command, description: 'Benchmark', run_in_background: true, ...extra },
    exec,
  );
  const answer = text(result);
  const id = /started background task (\S+)/.exec(answer)?.[1];
  if (result.isError || !id) throw new Error(`background start failed: ${answer}`);
  return id;
}

/** A `durable-bash worker` process against `server`, its tasks' files in `spillDir`. */
export function startWorker(
  server: BenchServer,
  taskQueue: string,
  spillDir: string,
  /** Another tree's `dist/cli/main.js` (an A/B of the host's code). @default this tree's */
  bin?: string,
): Promise<WorkerProcess> {
  // The helper reads only the address off its environment.
  const env = { address: server.address } as unknown as TestWorkflowEnvironment;
  // `npm run bench -- --isolation MODE`; the worker's default (auto) otherwise.
  const isolation = process.env.BENCH_ISOLATION;
  return startWorkerProcess(
    env,
    taskQueue,
    [
      '--namespace',
      server.namespace,
      '--spill-dir',
      spillDir,
      ...(isolation ? ['--isolation', isolation] : []),
    ],
    bin === undefined ? {} : { bin },
  );
}

/** How often, and for how long at most, `settledRss` samples a worker that has just started. */
const SETTLE_SAMPLE_MS = 2_000;
const SETTLE_MAX_MS = 90_000;
/** A worker has settled once its RSS fell by less than this over the last SETTLE_QUIET_MS. */
const SETTLE_DROP_BYTES = 2 * 1024 * 1024;
const SETTLE_QUIET_MS = 10_000;

/**
 * An idle worker's RSS once it has settled: a new worker holds about 40 MiB of start-up garbage
 * (V8's young generation and free heap pages) that V8's idle memory reducer returns 20-50 s later
 * (docs/PERFORMANCE.md, "What the idle worker's memory is made of"). Fleets run warm workers, so
 * the full bench measures from there; `at2s` is the reading the bench took before.
 */
export async function settledRss(worker: {
  rssBytes(): number;
}): Promise<{ bytes: number; at2s: number; afterMs: number }> {
  const began = Date.now();
  await sleep(2_000);
  const at2s = worker.rssBytes();
  const samples: { atMs: number; bytes: number }[] = [];
  for (;;) {
    const atMs = Date.now() - began;
    samples.push({ atMs, bytes: worker.rssBytes() });
    const window = samples.filter((sample) => sample.atMs >= atMs - SETTLE_QUIET_MS);
    const quietLongEnough = atMs - SETTLE_QUIET_MS >= (samples[0]?.atMs ?? atMs);
    const drop = Math.max(...window.map((sample) => sample.bytes)) - (samples.at(-1)?.bytes ?? 0);
    // V8's reducer waits 20 s or more before it starts: never call it settled sooner.
    if ((atMs >= 30_000 && quietLongEnough && drop < SETTLE_DROP_BYTES) || atMs >= SETTLE_MAX_MS)
      return { bytes: samples.at(-1)?.bytes ?? at2s, at2s, afterMs: atMs };
    await sleep(SETTLE_SAMPLE_MS);
  }
}

export function rssBytesOf(pid: number): number {
  try {
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kib) * 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * What `pid`'s open file descriptors are, counted by kind: a pipe, an anon inode (`[pidfd]`,
 * `[eventfd]`), the path of a file, or a socket by what it is connected to (`tcp to 127.0.0.1:7233`,
 * `unix`), so a count that grows names what grows.
 */
export function fdKindsOf(pid: number | 'self'): Map<string, number> {
  const kinds = new Map<string, number>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return kinds;
  }
  const sockets = socketsOf(pid);
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed between the listing and the read
    }
    const socket = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const kind = socket
      ? `socket ${sockets.get(socket) ?? 'other'}`
      : target.startsWith('pipe:')
        ? 'pipe'
        : target;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return kinds;
}

/** Socket inodes of `pid`'s network namespace, each as `tcp to ADDRESS:PORT`, `tcp listening` or `unix`. */
function socketsOf(pid: number | 'self'): Map<string, string> {
  const sockets = new Map<string, string>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [remote, state, inode] = [fields[2], fields[3], fields[9]];
      if (!remote || !inode) continue;
      sockets.set(inode, state === '0A' ? 'tcp listening' : `tcp to ${hexAddress(remote)}`);
    }
  }
  try {
    for (const line of readFileSync(`/proc/${pid}/net/unix`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[6]) sockets.set(fields[6], 'unix');
    }
  } catch {
    // no unix table: such sockets count as `other`
  }
  return sockets;
}

/** `0100007F:1C41` as `127.0.0.1:7233` (IPv4; an IPv6 address keeps its hex form). */
function hexAddress(hex: string): string {
  const [address = '', port = '0'] = hex.split(':');
  const ip =
    address.length === 8
      ? (address.match(/../g) ?? [])
          .map((byte) => Number.parseInt(byte, 16))
          .reverse()
          .join('.')
      : address;
  return `${ip}:${Number.parseInt(port, 16)}`;
}

export function fdCountOf(pid: number | 'self'): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}

/** Whether any process of process group `pgid` is left (signal 0 to the group). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function alive(pid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/stat`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Counts the tasks in `spillDir` whose command runs: its supervisor's state record names the
 * command's pid (0 until the command started). Remembers what it saw, so each record is read until
 * it says started and no more.
 */
export class StartedRecords {
  private readonly started = new Map<string, { pid: number; supervisorPid: number }>();
  constructor(private readonly spillDir: string) {}

  count(): number {
    let names: string[];
    try {
      names = readdirSync(this.spillDir);
    } catch {
      return this.started.size;
    }
    for (const name of names) {
      if (!name.endsWith('.state')) continue;
      const taskId = name.slice(0, -'.state'.length);
      if (this.started.has(taskId)) continue;
      try {
        const record = JSON.parse(readFileSync(path.join(this.spillDir, name), 'utf8'));
        if (record.pid > 0)
          this.started.set(taskId, { pid: record.pid, supervisorPid: record.supervisorPid });
      } catch {
        // Being written: read it next time.
      }
    }
    return this.started.size;
  }

  of(taskId: string): { pid: number; supervisorPid: number } | undefined {
    this.count();
    return this.started.get(taskId);
  }
}

/** Field 22 of /proc/<pid>/stat (the start time), or undefined when the pid is gone. */
function startTimeOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return undefined;
  }
}

/**
 * A run that failed part-way may leave tasks running: SIGKILLs every command group and supervisor
 * that the state records in `spillDir` name and that is still the process they name (same start
 * time). Answers how many it ended.
 */
export function endLeftovers(spillDir: string): number {
  let ended = 0;
  let names: string[] = [];
  try {
    names = readdirSync(spillDir).filter((name) => name.endsWith('.state'));
  } catch {
    return 0;
  }
  for (const name of names) {
    try {
      const record = JSON.parse(readFileSync(path.join(spillDir, name), 'utf8'));
      if (record.pid > 0 && startTimeOf(record.pid) === record.pidStart) {
        process.kill(-record.pid, 'SIGKILL');
        ended++;
      }
      if (record.supervisorPid > 0 && startTimeOf(record.supervisorPid) === record.supervisorStart)
        process.kill(record.supervisorPid, 'SIGKILL');
    } catch {
      // Gone, or a record being written.
    }
  }
  return ended;
}

/**
 * The supervisors running tasks from `spillDir`, with their PSS: those its state records name and
 * that still run (a supervisor's command line does not name the spill dir when the worker's nursery
 * started it), each with its launcher chain when the command runs in one (bubblewrap and the inner
 * supervisor: a sandboxed or isolated command's), counted in `launchers`. The nursery and its warm
 * supervisors, a few small processes per worker, are not in it.
 */
export function supervisorsOf(spillDir: string): { count: number; pssBytes: number; launchers: number } {
  let count = 0;
  let pssBytes = 0;
  let launchers = 0;
  let names: string[] = [];
  try {
    names = readdirSync(spillDir).filter((name) => name.endsWith('.state'));
  } catch {
    return { count, pssBytes, launchers };
  }
  for (const name of names) {
    try {
      const record = JSON.parse(readFileSync(path.join(spillDir, name), 'utf8')) as SupervisorRecord;
      if (!(record.supervisorPid > 0) || !isSameProcess(record, 'supervisor')) continue;
      pssBytes += pssOf(record.supervisorPid);
      count++;
      for (const pid of launcherChainOf(record.supervisorPid)) {
        pssBytes += pssOf(pid);
        launchers++;
      }
    } catch {
      // Ended while we looked, or a record being written.
    }
  }
  return { count, pssBytes, launchers };
}

function pssOf(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The processes between a supervisor and its command: bubblewrap's and the inner supervisor. */
function launcherChainOf(supervisorPid: number): number[] {
  const chain: number[] = [];
  const children = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  const comm = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  };
  let next = children(supervisorPid);
  while (next.length > 0) {
    const launcher = next.filter((pid) => ['bwrap', 'nsenter', 'durable-bash-su'].includes(comm(pid)));
    chain.push(...launcher);
    next = launcher.flatMap(children);
  }
  return chain;
}

/** Asks tasks to end (a cancel of their workflows, what `bash_kill` sends) without waiting, `width` at a time. */
export async function cancelAll(client: Client, ids: string[], width = 50): Promise<void> {
  for (let i = 0; i < ids.length; i += width) {
    await Promise.all(
      ids.slice(i, i + width).map((id) =>
        client.workflow
          .getHandle(id)
          .cancel()
          .catch(() => undefined),
      ),
    );
  }
}

/** Runs `work` over `items` with `width` concurrent callers; each caller takes the next item. */
export async function inLanes<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await work(item);
      }
    }),
  );
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds a process has used so far (user + system of its own threads), 0 when it is gone. */
export function cpuSecondsOf(pid: number): number {
  // After the command name: field 3 (state) first, so utime (14) and stime (15) are at 11 and 12.
  const fields = procStat(pid)?.fields;
  return fields ? (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS : 0;
}

/** The machine's busy CPU seconds so far, over every core (all but idle and iowait). */
export function machineBusySeconds(): number {
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = (
    readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? ''
  )
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

/** Where the CPU went over a stretch of time: the machine, this process, and one other process. */
export class CpuSpan {
  private readonly machine = machineBusySeconds();
  private readonly self = process.cpuUsage();
  private readonly started = performance.now();
  private readonly other: number;

  constructor(private readonly otherPid?: number) {
    this.other = otherPid === undefined ? 0 : cpuSecondsOf(otherPid);
  }

  /** CPU seconds since the span began: the machine's, this process's, the other process's, and the wall time. */
  end(): { machine: number; self: number; other: number; wallSeconds: number } {
    const self = process.cpuUsage(this.self);
    return {
      machine: machineBusySeconds() - this.machine,
      self: (self.user + self.system) / 1e6,
      other: this.otherPid === undefined ? 0 : cpuSecondsOf(this.otherPid) - this.other,
      wallSeconds: (performance.now() - this.started) / 1000,
    };
  }
}

/**
 * Every process's CPU seconds so far, by pid and start time: its threads' own time in ns
 * (/proc/<pid>/task/<tid>/schedstat, so a process that ran for under a clock tick still counts)
 * and its reaped children's (cutime and cstime, in clock ticks), but for PID 1's.
 */
function everyProcessSeconds(): Map<string, { name: string; seconds: number }> {
  const all = new Map<string, { name: string; seconds: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat === undefined) continue;
    let ns = 0;
    try {
      for (const tid of readdirSync(`/proc/${entry}/task`))
        ns += Number(readFileSync(`/proc/${entry}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      continue; // Gone meanwhile.
    }
    // PID 1 reaps the orphans of every process tree, each with its whole life's CPU: left out.
    const children = entry === '1' ? 0 : (Number(stat.fields[13]) + Number(stat.fields[14])) / CLOCK_TICKS;
    all.set(`${entry}@${stat.fields[19]}`, { name: stat.name, seconds: ns / 1e9 + children });
  }
  return all;
}

/**
 * Where the machine's CPU went over a stretch of time, by program name (/proc's `comm`). A
 * process's reaped children count for their parent, so a short-lived `bash` shows under the
 * supervisor that waited for it; a process that ended unreaped in the stretch is missed.
 */
export class CpuByProgram {
  private readonly before = everyProcessSeconds();

  /** CPU seconds by program name, largest first. */
  end(): Array<{ name: string; seconds: number; processes: number }> {
    const byName = new Map<string, { seconds: number; processes: number }>();
    for (const [key, now] of everyProcessSeconds()) {
      const spent = now.seconds - (this.before.get(key)?.seconds ?? 0);
      if (spent <= 0) continue;
      const entry = byName.get(now.name) ?? { seconds: 0, processes: 0 };
      entry.seconds += spent;
      entry.processes++;
      byName.set(now.name, entry);
    }
    return [...byName].map(([name, e]) => ({ name, ...e })).sort((a, b) => b.seconds - a.seconds);
  }
}

/** The largest programs of a `CpuByProgram` span, in ms a task: "temporal 12.9, sleep 2.9 (300 processes)". */
export function programsPerTask(byProgram: ReturnType<CpuByProgram['end']>, tasks: number, top = 6): string {
  return byProgram
    .slice(0, top)
    .map(
      (p) =>
        `${p.name} ${((1000 * p.seconds) / tasks).toFixed(1)}${p.processes > 1 ? ` (${p.processes} processes)` : ''}`,
    )
    .join(', ');
}

/**
 * When each command attempt started since `sinceWallMs` (ms after it, sorted), from the host alone:
 * an attempt writes its `<task id>.attempt` file before anything else (docs/DURABILITY.md).
 */
export function attemptsSince(spillDir: string, sinceWallMs: number): number[] {
  return readdirSync(spillDir)
    .filter((name) => name.endsWith('.attempt'))
    .flatMap((name) => {
      try {
        return [statSync(path.join(spillDir, name)).mtimeMs - sinceWallMs];
      } catch {
        return [];
      }
    })
    .filter((ms) => ms >= 0)
    .sort((a, b) => a - b);
}

/**
 * A bench file's last step for its tasks: kills what a failed case left running under `spillDir`
 * (saying so in `notes`), and removes the directory.
 */
export function endBenchTasks(spillDir: string | undefined, notes: string[]): void {
  if (spillDir === undefined) return;
  const ended = endLeftovers(spillDir);
  if (ended > 0) notes.push(`${ended} tasks were still running at the end (a case failed part-way); killed`);
  rmSync(spillDir, { recursive: true, force: true });
}
