/**
 * What a task's supervisor records (supervisor/, docs/SUPERVISOR.md): its claim with the
 * command's identity, and the command's exact end. A record names processes by pid, start time and
 * boot, so a reused pid is never taken for the supervisor or the command.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { currentBootId, processStart } from './process-identity.js';
import { readJson } from './task-files.js';

/**
 * The format of a task's files on its host that this worker knows (its records, spill files, stdin
 * FIFO and terminal files, docs/SUPERVISOR.md): the `v` its supervisor writes into both records. A
 * release that changes any of them raises it, so an older worker meeting them refuses rather than
 * guesses.
 */
export const TASK_FILES_FORMAT = 1;

/** The failure type of a task whose files are in a newer format than this worker's. */
export const NEWER_TASK_FILES = 'NewerTaskFilesFormat';

/**
 * A task whose records are newer than this worker knows: its files are left as they are, and the
 * attempt, stop or read that met them fails (retried: a worker of a newer release on the host takes
 * the retry), its message the one line that says so.
 */
export function newerTaskFiles(taskId: string, format: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: NEWER_TASK_FILES,
    message: `task ${taskId}: its files on this host are format v${format}, newer than this worker's (v${TASK_FILES_FORMAT}); left untouched for a worker of the release that wrote them`,
    nonRetryable: false,
  });
}

export function isNewerTaskFiles(err: unknown): err is ApplicationFailure {
  return err instanceof ApplicationFailure && err.type === NEWER_TASK_FILES;
}

/** A record of a format this worker knows (absent `v`: the first), or the failure that says it is newer. */
async function readKnown<T>(file: string): Promise<T | undefined> {
  const record = await readJson<T & { v?: unknown }>(file);
  if (record !== undefined && typeof record.v === 'number' && record.v > TASK_FILES_FORMAT) {
    throw newerTaskFiles(path.basename(file).replace(/\.[^.]+$/, ''), record.v);
  }
  return record;
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
  /**
   * Whether a kill signal reached the command before it ended; absent from supervisors before the
   * field existed.
   */
  stopped?: boolean;
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

export const readRecord = (file: string) => readKnown<SupervisorRecord>(file);
export const readEnd = (file: string) => readKnown<EndRecord>(file);

/** The recorded process is still the one running under that pid (same boot, same start time). */
export function isSameProcess(record: SupervisorRecord, which: 'supervisor' | 'command'): boolean {
  if (record.bootId !== currentBootId()) return false;
  const [pid, start] =
    which === 'supervisor' ? [record.supervisorPid, record.supervisorStart] : [record.pid, record.pidStart];
  return pid > 0 && processStart(pid) === start;
}

/**
 * Claims a task for no one: a kill that found no supervisor makes sure none starts later. False if
 * a supervisor claimed it first.
 */
export async function writeTombstone(stateFile: string): Promise<boolean> {
  const tmp = `${stateFile}.tmp.${process.pid}`;
  const record = { v: TASK_FILES_FORMAT, tombstone: true, startedAtMs: Date.now() };
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

/** A signal's name from its number (`SIGTERM` for 15), as results report it. */
export function signalName(signal: number): string {
  const entry = Object.entries(os.constants.signals).find(([, number]) => number === signal);
  return entry?.[0] ?? `SIG${signal}`;
}
