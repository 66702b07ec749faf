/**
 * A task's files on its host, beside its spill files: the supervisor's state record (its claim and
 * the command's identity), its end record, the stdin FIFO, and the attempt now attached. They are
 * the truth a restarted worker goes by (docs/DURABILITY.md).
 *
 * The records are read and written with synchronous calls: each is a few hundred bytes in the local
 * spill directory, which a synchronous call handles in tens of microseconds, while an asynchronous
 * one waits its turn in libuv's pool of four threads behind every other task's file work (0.2 to 0.7
 * ms a call in a foreground run, more in a burst: docs/PERFORMANCE.md).
 */
import { chmodSync, readFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { RunFailureType } from '../../shared/task.js';
import { isTaskIdShape, MAX_TASK_ID_LENGTH } from '../../shared/task-id.js';
import type { ProcessIdentity } from './process-identity.js';

/** A task's files on its host, named from its id. */
export interface TaskFiles {
  taskId: string;
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
  /** A terminal task's sizes, each with the byte of the log (stdout) where it began (`--tty-events`). */
  ttyEvents: string;
  /** A terminal task's requested size, which its supervisor applies on SIGWINCH (`--tty-resize`). */
  ttySize: string;
  /** A terminal task's screen as last rendered, to go on from (terminal-logs.ts). */
  screen: string;
  /** How many lines had scrolled off a terminal task's screen at the end of each recent read. */
  screenMarks: string;
  /**
   * Written by workers of 0.2.0 when a foreground run ended and its result holds all of its
   * output; now the end record is made read-only instead (`markDone`). Either way the task's files
   * are then the sweeper's after a short while, not kept for the retention (spill-sweeper.ts).
   */
  foregroundDone: string;
  /** The task's monitor (`notify_on`, `bash_monitor`): its pattern and how far its matches were sent. */
  monitor: string;
  /** Left by the worker when it ended the task for its session's disk cap (spill/disk-cap-mark.ts). */
  diskCap: string;
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
    taskId,
    stdout: `${base}.stdout`,
    stderr: `${base}.stderr`,
    state: `${base}.state`,
    exit: `${base}.exit`,
    attempt: `${base}.attempt`,
    stdin: `${base}.stdin`,
    ttyEvents: `${base}.tty`,
    ttySize: `${base}.tty-size`,
    screen: `${base}.screen`,
    screenMarks: `${base}.screen-marks`,
    foregroundDone: `${base}.foreground-done`,
    monitor: `${base}.monitor`,
    diskCap: `${base}.disk-cap`,
  };
}

/** The end record's mode once its foreground run's result holds all of its output. */
const DONE_MODE = 0o400;

/** Marks a foreground run done (see `TaskFiles.foregroundDone`); its files gone already is no matter. */
export function markDone(files: TaskFiles): void {
  try {
    chmodSync(files.exit, DONE_MODE);
  } catch {
    // Swept or removed meanwhile: nothing left to mark.
  }
}

/** Whether a task's end record (its lstat) marks its foreground run done. */
export function isMarkedDone(exitStat: Pick<Stats, 'mode'>): boolean {
  return (exitStat.mode & 0o777) === DONE_MODE;
}

/** A record file's JSON, or undefined when there is no such file. */
export async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  // Files are renamed into place whole, so a partial file means a foreign writer: report it.
  return JSON.parse(text) as T;
}

export const readAttempt = (file: string) => readJson<AttemptRecord>(file);

/** The attempt that is attached to a task's command now, as the task's `.attempt` file holds it. */
export interface AttemptRecord {
  /** The worker's namespace and host queue: a scan touches only its own tasks. */
  namespace: string;
  hostQueue: string;
  /** The attempt's activity task token, base64. */
  taskToken: string;
  /** The worker process that ran it (files written before it lack it). */
  worker?: ProcessIdentity;
  /** The command's workdir: a workspace it lies in is not swept while the task may run (files written before it lack it). */
  workdir?: string;
}
