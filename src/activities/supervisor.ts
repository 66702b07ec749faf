/**
 * The worker's side of the per-command supervisor (supervisor/supervisor.c, docs/SUPERVISOR.md):
 * where its files live, how they read, how its identity is checked, and how it is started and
 * signalled. The supervisor is the command's real parent; it records the command's identity and
 * its exact end in files beside the spill files, which are the truth a restarted worker goes by.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from '@temporalio/common';
import { KILL_GRACE_MS } from '../shared/limits.js';
import { RunFailureType } from '../shared/task.js';
import { isTaskIdShape, MAX_TASK_ID_LENGTH } from '../shared/task-id.js';
import type { TaskLimits } from './containment.js';

/** A task's files on its host, named from its id. */
export interface TaskFiles {
  stdout: string;
  stderr: string;
  /** The supervisor's record: created exclusively (the claim), then completed with the command's pid. */
  state: string;
  /** The command's end, written once by the supervisor from a real wait status. */
  exit: string;
  /** The running attempt's activity task token, so a restarted worker can end a stale attempt at once. */
  attempt: string;
  /** The named pipe the supervisor feeds the command's stdin from, for a task that keeps it open. */
  stdin: string;
}

/**
 * A task's files, named from its id. An id that could name a path outside `spillDir` (any workflow
 * input may carry one) is refused before any file, or cgroup named the same way, is touched.
 */
export function taskFiles(spillDir: string, taskId: string): TaskFiles {
  if (!isTaskIdShape(taskId)) {
    throw ApplicationFailure.create({
      type: RunFailureType.invalidTaskId,
      message: `invalid task id ${JSON.stringify(taskId.slice(0, MAX_TASK_ID_LENGTH))}: expected bash- then letters, digits and dashes`,
      nonRetryable: true,
    });
  }
  const base = path.join(spillDir, taskId);
  return {
    stdout: `${base}.stdout`,
    stderr: `${base}.stderr`,
    state: `${base}.state`,
    exit: `${base}.exit`,
    attempt: `${base}.attempt`,
    stdin: `${base}.stdin`,
  };
}

/** What the supervisor recorded when it claimed the task and started the command. */
export interface SupervisorRecord {
  supervisorPid: number;
  /** Field 22 of /proc/<pid>/stat: with the boot id, a pid that cannot be mistaken for a reused one. */
  supervisorStart: number;
  bootId: string;
  /** The command's pid (the leader of its process group); 0 until the command started. */
  pid: number;
  pidStart: number;
  startedAtMs: number;
  /** Written by a kill that found no claim: no supervisor may start this task any more. */
  tombstone?: boolean;
  /** The task's cgroups, when it has any: whatever is left in them ends with the task. */
  cgroups?: string[];
}

/** How the command ended, as its supervisor saw it in waitpid. */
export interface EndRecord {
  exitCode?: number;
  /** The number of the signal that ended it. */
  signal?: number;
  endedAtMs: number;
  /** Set when bash itself could not be executed (the exit code is then 127). */
  error?: string;
  /** Streams whose spill file stopped at `outputMax` bytes (the command's later writes failed). */
  outputCapped?: Array<'stdout' | 'stderr'>;
  outputMax?: number;
  /** Streams whose spill file refused a write (a full disk), with the error: the command's later writes failed. */
  outputFailed?: { stdout?: string; stderr?: string };
  /** Processes of the task the kernel killed at its `memoryMax` limit. */
  oomKills?: number;
  memoryMax?: number;
  /** Forks refused at the task's `pidsMax` limit. */
  pidsMaxHits?: number;
  pidsMax?: number;
}

/** The supervisor binary: `DURABLE_BASH_SUPERVISOR`, else the one `npm run build` compiles. */
export function supervisorPath(): string {
  const fromEnv = process.env.DURABLE_BASH_SUPERVISOR;
  if (fromEnv) return fromEnv;
  // Two levels up from src/activities or dist/activities is the package root.
  const root = fileURLToPath(new URL('../..', import.meta.url));
  return path.join(root, 'dist', 'bin', 'durable-bash-supervisor');
}

/** Fails with what to run when the supervisor binary is missing: no command can run without it. */
export function assertSupervisorBinary(binary = supervisorPath()): void {
  if (!existsSync(binary)) {
    throw new Error(`no supervisor binary at ${binary}; build it with: npm run build`);
  }
}

async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  // Files are renamed into place whole, so a partial file means a foreign writer: report it.
  return JSON.parse(text) as T;
}

export const readRecord = (file: string) => readJson<SupervisorRecord>(file);
export const readEnd = (file: string) => readJson<EndRecord>(file);
export const readAttempt = (file: string) => readJson<AttemptRecord>(file);

/** The attempt that is attached to a task's command now, as the task's `.attempt` file holds it. */
export interface AttemptRecord {
  /** The worker's namespace and host queue: a scan touches only its own tasks. */
  namespace: string;
  hostQueue: string;
  /** The attempt's activity task token, base64. */
  taskToken: string;
}

/**
 * Keeps the running attempt's task token beside the task's files: a worker that restarts after a
 * crash fails that attempt at once, so the retry re-attaches now rather than after the heartbeat
 * timeout.
 */
export async function rememberAttempt(files: TaskFiles, attempt: AttemptRecord): Promise<void> {
  const tmp = `${files.attempt}.tmp.${process.pid}`;
  await fs.writeFile(tmp, JSON.stringify(attempt), { mode: 0o600 });
  await fs.rename(tmp, files.attempt);
}

let cachedBootId: string | undefined;

/** This boot's id: a record from another boot names processes that no longer exist. */
export function currentBootId(): string {
  cachedBootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return cachedBootId;
}

/**
 * A process's /proc/<pid>/stat: its command name, and the fields after it (`fields[0]` is the state,
 * field 3 of the file), or undefined if it is gone.
 */
function procStat(pid: number): { name: string; fields: string[] } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
  const nameEnd = stat.lastIndexOf(')');
  return { name: stat.slice(stat.indexOf('(') + 1, nameEnd), fields: stat.slice(nameEnd + 2).split(' ') };
}

/** A process's start time (field 22 of /proc/<pid>/stat), or undefined if it is gone or a zombie. */
export function processStart(pid: number): number | undefined {
  const fields = procStat(pid)?.fields;
  if (fields === undefined || fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return Number(fields[19]);
}

/** The recorded process is still the one running under that pid (same boot, same start time). */
export function isSameProcess(record: SupervisorRecord, which: 'supervisor' | 'command'): boolean {
  if (record.bootId !== currentBootId()) return false;
  const [pid, start] =
    which === 'supervisor' ? [record.supervisorPid, record.supervisorStart] : [record.pid, record.pidStart];
  return pid > 0 && processStart(pid) === start;
}

/**
 * Asks the supervisor to end the command: SIGTERM is forwarded to the command's process group,
 * SIGUSR1 makes it SIGKILL the group; SIGUSR2 closes the command's stdin once what its FIFO holds
 * went in. Signals nothing unless the pid is still that supervisor.
 */
export function signalSupervisor(
  record: SupervisorRecord,
  signal: 'SIGTERM' | 'SIGUSR1' | 'SIGUSR2',
): boolean {
  if (!isSameProcess(record, 'supervisor')) return false;
  try {
    process.kill(record.supervisorPid, signal);
    return true;
  } catch {
    return false;
  }
}

/** How long after its SIGKILL a supervisor may take to record the end before it is killed itself. */
export const FORCED_END_AFTER_MS = 6_000;

/**
 * Ends the command's group through its supervisor: SIGTERM now, SIGKILL (SIGUSR1) after the grace.
 * A supervisor that still runs FORCED_END_AFTER_MS later has stopped doing its job: the task's
 * cgroups, its group and the supervisor itself are SIGKILLed, so that a kill always ends (the task
 * is then lost, its exit status unknown), and `onForced` hears what the processes were doing.
 * Returns what cancels the timers once the end is known.
 */
export function endGroup(record: SupervisorRecord, onForced?: (state: string) => void): () => void {
  signalSupervisor(record, 'SIGTERM');
  const grace = setTimeout(() => signalSupervisor(record, 'SIGUSR1'), KILL_GRACE_MS);
  const force = setTimeout(() => {
    if (!isSameProcess(record, 'supervisor')) return;
    onForced?.(processStates(record));
    killOrphanedGroup(record);
    try {
      process.kill(record.supervisorPid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }, KILL_GRACE_MS + FORCED_END_AFTER_MS);
  return () => {
    clearTimeout(grace);
    clearTimeout(force);
  };
}

/** The `onForced` of `endGroup` that logs the forced end of a task's command as a warning. */
export function warnForcedEnd(log: Pick<Logger, 'warn'>, taskId: string): (state: string) => void {
  return (state) => log.warn(`task ${taskId}: its supervisor did not end the command; killed it`, { state });
}

/** What a task's supervisor and the processes in its cgroups are doing: `pid name state (wchan)`, for a log. */
function processStates(record: SupervisorRecord): string {
  const pids = new Set([record.supervisorPid]);
  for (const dir of record.cgroups ?? []) for (const pid of cgroupMembers(dir) ?? []) pids.add(pid);
  return [...pids]
    .map((pid) => {
      const stat = procStat(pid);
      let wchan = '?';
      try {
        wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8').trim();
      } catch {
        // Gone meanwhile.
      }
      return `${pid} ${stat?.name ?? '?'} ${stat?.fields[0] ?? '?'} (${wchan})`;
    })
    .join(', ');
}

/** The pids in a cgroup, or undefined when there is no such cgroup. */
function cgroupMembers(dir: string): number[] | undefined {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * Ends a command group whose supervisor is gone (killed), so that nothing runs that no one can
 * report: SIGKILL to the group, only while its leader is still the recorded process.
 */
export function killOrphanedGroup(record: SupervisorRecord): void {
  // The task's cgroups hold whatever is left, even what left the group (they are the task's own,
  // so they hold no other task's processes).
  for (const dir of record.cgroups ?? []) killCgroup(dir);
  if (!isSameProcess(record, 'command')) return;
  try {
    process.kill(-record.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** SIGKILLs every process in a cgroup (cgroup.kill, else each pid listed), then removes it. */
function killCgroup(dir: string): void {
  try {
    writeFileSync(path.join(dir, 'cgroup.kill'), '1');
  } catch {
    const members = cgroupMembers(dir);
    if (members === undefined) return; // No such cgroup: nothing to end.
    for (const pid of members) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
  // Removed once empty; a later scan tries again if processes were still exiting.
  try {
    rmdirSync(dir);
  } catch {
    // Still busy.
  }
}

/**
 * Claims a task for no one: a kill that found no supervisor makes sure none starts later. False if
 * a supervisor claimed it first.
 */
export async function writeTombstone(stateFile: string): Promise<boolean> {
  const tmp = `${stateFile}.tmp.${process.pid}`;
  const record = { v: 1, tombstone: true, startedAtMs: Date.now() };
  await fs.writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  try {
    await fs.link(tmp, stateFile);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

export interface SupervisorSpawn {
  files: TaskFiles;
  /** The task's cgroups, to be made by the supervisor (none: the process tree contains it). */
  cgroups: readonly string[];
  limits: TaskLimits;
  /** A sandbox launcher's argv: the command then runs inside it, under an inner supervisor. */
  launcher?: readonly string[];
  /** The supervisor binary to run. @default supervisorPath() */
  binary?: string;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdoutFd: number;
  stderrFd: number;
  /** The command's stdin comes from `files.stdin`, a FIFO the supervisor makes (else /dev/null). */
  keepStdinOpen?: boolean;
}

export type SpawnReport =
  /** The command runs; `exited` settles when the supervisor (this worker's child) exits. */
  | { kind: 'started'; exited: Promise<void> }
  /** Another attempt's supervisor (or a kill's tombstone) holds the task: attach to it instead. */
  | { kind: 'claimed' }
  | { kind: 'error'; message: string };

/** The supervisor's flags for a task's limits and its kill grace (a spawned one's and the nursery's). */
export function limitFlags(limits: TaskLimits): string[] {
  return [
    ...(limits.processes > 0 ? ['--pids-max', String(limits.processes)] : []),
    ...(limits.memoryBytes > 0 ? ['--memory-max', String(limits.memoryBytes)] : []),
    ...(limits.outputBytesPerStream > 0 ? ['--output-max', String(limits.outputBytesPerStream)] : []),
    '--grace-ms',
    String(KILL_GRACE_MS),
  ];
}

/**
 * Starts a supervisor for the command in a new session, so it outlives this worker, and waits for
 * its report on fd 3: `started <pid>` once the command's identity is on disk, `claimed`, or
 * `error <message>`.
 */
export function spawnSupervisor(options: SupervisorSpawn): Promise<SpawnReport> {
  const { files } = options;
  const { limits } = options;
  const flags = [
    ...options.cgroups.flatMap((dir) => ['--cgroup', dir]),
    ...limitFlags(limits),
    ...(options.launcher ? ['--sandboxed'] : []),
    ...(options.keepStdinOpen ? ['--stdin', files.stdin] : []),
  ];
  const binary = options.binary ?? supervisorPath();
  const program = options.launcher ? [...options.launcher, binary, '--inner', '--'] : [];
  const args = [...flags, files.state, files.exit, '--', ...program, 'bash', '-c', options.command];
  let child: ChildProcess;
  try {
    child = spawn(binary, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', options.stdoutFd, options.stderrFd, 'pipe'],
    });
  } catch (err) {
    // Thrown at once for what no retry can change (E2BIG: a command past the kernel's argument
    // limit, an environment too large): the command never started, and never will.
    return Promise.resolve({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
  }
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  // This worker may stop before the supervisor: never keep the event loop alive for it.
  child.unref();
  const report = child.stdio[3] as NodeJS.ReadableStream & { unref?: () => void };
  return new Promise<SpawnReport>((resolve) => {
    let text = '';
    child.once('error', (err) => resolve({ kind: 'error', message: err.message }));
    report.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    report.once('close', () => {
      resolve(reportOf(text, exited));
    });
  });
}

/** What a supervisor's report (all it wrote on fd 3) says; `exited` settles when it exits. */
export function reportOf(text: string, exited: Promise<void>): SpawnReport {
  const line = text.split('\n')[0] ?? '';
  if (line.startsWith('started ')) return { kind: 'started', exited };
  if (line === 'claimed') return { kind: 'claimed' };
  return { kind: 'error', message: line.replace(/^error /, '') || 'the supervisor ended without a report' };
}

/** A signal's name from its number (`SIGTERM` for 15), as results report it. */
export function signalName(signal: number): string {
  const entry = Object.entries(os.constants.signals).find(([, number]) => number === signal);
  return entry?.[0] ?? `SIG${signal}`;
}
