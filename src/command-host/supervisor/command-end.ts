/**
 * Waiting for a supervised command's end and turning it into an outcome: shared by the command
 * activity (attached while the command runs) and the stop activity (a kill while no attempt runs).
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { SUPERVISOR_CHECK_INTERVAL_MS, SUPERVISOR_CHECKS_PER_SECOND } from '../../shared/limits.js';
import { KILLED_BEFORE_START } from '../../shared/status-line.js';
import {
  type CommandOutcome,
  type CommandProgress,
  type CommandSpec,
  type LimitsReached,
  RunFailureType,
  type TerminalEnd,
} from '../../shared/task.js';
import { readProgressIfAny } from '../progress-heartbeats.js';
import { diskCapOf } from '../spill/disk-cap-mark.js';
import { closeReaders, openReaders, type SpillReaders, streamTail } from '../spill/spill-files.js';
import { TerminalLogs } from '../terminal/terminal-logs.js';
import { killOrphanedGroup } from './process-groups.js';
import { currentBootId } from './process-identity.js';
import {
  type EndRecord,
  isSameProcess,
  readEnd,
  readRecord,
  type SupervisorRecord,
  signalName,
} from './supervisor-records.js';
import type { TaskFiles } from './task-files.js';

/** Why a command's end can never be known (the status line's reason). */
export const LostReason = {
  supervisorKilled: 'its supervisor was killed; the exit status is unknown',
  supervisorKilledBeforeStart: 'its supervisor was killed before the command started',
  hostRestarted: 'its host restarted; the exit status is unknown',
  recordsGone: 'its records on its host are gone; the exit status is unknown',
} as const;

/**
 * The failure of a task whose command's end can never be known; `lastProgress` (the command's last
 * heartbeat, when one is known) rides along, so the task ends with the output the server last knew.
 */
export function commandLost(reason: string, lastProgress?: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: RunFailureType.commandLost,
    message: reason,
    nonRetryable: true,
    details: lastProgress === undefined ? [] : [lastProgress],
  });
}

/**
 * A lost failure with the output its host holds, read from the spill files: the attempt (or stop)
 * that finds a command lost reports what it printed, as a heartbeat would, since the attempt a
 * crashed worker left may have sent none since. Any other error is thrown as it is.
 */
export async function withLastOutput(
  err: unknown,
  files: TaskFiles,
  record: SupervisorRecord,
  hostQueue: string,
): Promise<never> {
  if (!(err instanceof ApplicationFailure) || err.type !== RunFailureType.commandLost || err.details?.length)
    throw err;
  const progress = await progressOnDisk(files, record, hostQueue);
  throw progress === undefined ? err : commandLost(err.message, progress);
}

/**
 * A started command's progress as its spill files hold it now, as a heartbeat would carry it: for
 * an attempt that ends without having sent it (a loss, a crashed worker's attempt failed at a
 * restart). Undefined when the files cannot be read.
 */
export async function progressOnDisk(
  files: TaskFiles,
  record: SupervisorRecord,
  hostQueue: string,
): Promise<CommandProgress | undefined> {
  const readers = await openReaders(files).catch(() => undefined);
  if (readers === undefined) return undefined;
  try {
    return readProgressIfAny({
      pid: record.pid,
      startedAtMs: record.startedAtMs,
      host: os.hostname(),
      hostQueue,
      files,
      readers,
    });
  } finally {
    await closeReaders(readers);
  }
}

/** How long a claim may stand without the command's pid before its supervisor counts as dead. */
const START_RECORD_WAIT_MS = 5_000;

/**
 * The claim's record once the command started, with the command's end if it is already recorded.
 * A claim without the command's pid is completed within moments by a live supervisor; a dead one
 * never will. Fails as lost when the supervisor is gone without an end (its group killed), or when
 * the record is from another boot of this host.
 */
export async function startedRecord(
  files: TaskFiles,
  claimed: SupervisorRecord,
): Promise<{ record: SupervisorRecord; end: EndRecord | undefined }> {
  // Known, not lost: the kill came first, so the command never ran (the status a kill before any
  // worker took it gives too).
  if (claimed.tombstone) {
    throw ApplicationFailure.create({
      type: RunFailureType.killedBeforeStart,
      message: KILLED_BEFORE_START,
      nonRetryable: true,
    });
  }
  let record = claimed;
  const waitUntil = Date.now() + START_RECORD_WAIT_MS;
  while (record.pid === 0 && isSameProcess(record, 'supervisor') && Date.now() < waitUntil) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    record = (await readRecord(files.state)) ?? record;
  }
  const end = await readEnd(files.exit);
  if (end) return { record, end };
  if (record.bootId !== currentBootId()) throw commandLost(LostReason.hostRestarted);
  if (isSameProcess(record, 'supervisor')) return { record, end: undefined };
  const reason = record.pid === 0 ? LostReason.supervisorKilledBeforeStart : LostReason.supervisorKilled;
  return { record, end: await endOrLost(files, record, reason) };
}

/**
 * The end of a command whose supervisor is gone: recorded just before it went, or never. Then the
 * command's group is killed, so nothing runs that no one can report, and the task is lost.
 */
async function endOrLost(files: TaskFiles, record: SupervisorRecord, reason: string): Promise<EndRecord> {
  const end = await readEnd(files.exit);
  if (end) return end;
  killOrphanedGroup(record);
  throw commandLost(reason);
}

/** Tells when a supervisor (by pid and start time) exits; `unwatched` when it cannot (see SupervisorNursery.watchExit). */
export type ExitWatch = (pid: number, start: number) => Promise<'exited' | 'unwatched'>;

/** Waits polling a supervisor (re-attached ones), across this worker's activities. */
let polling = 0;

/** Each polled supervisor's interval: once a second, or slower when many share the checks' budget. */
const checkIntervalMs = () =>
  Math.max(SUPERVISOR_CHECK_INTERVAL_MS, (polling * 1000) / SUPERVISOR_CHECKS_PER_SECOND);

/**
 * Waits until the command's end is on disk and returns it, or fails as lost when its supervisor is
 * gone without recording one (its group is then killed, so nothing runs unreported). `exited`
 * settles when the supervisor exits, for a supervisor this worker started: the end is read then,
 * with no polling (unless the supervisor still lives: its nursery died). A supervisor started by an
 * earlier worker is watched through `watch` (the nursery's pidfd on it); where that cannot be, it
 * is polled (its end file and its identity) every SUPERVISOR_CHECK_INTERVAL_MS, or slower when more
 * than SUPERVISOR_CHECKS_PER_SECOND share that. Stops (undefined) when `abandon` aborts.
 */
export async function waitForEnd(
  files: TaskFiles,
  record: SupervisorRecord,
  exited: Promise<void> | undefined,
  abandon: AbortSignal,
  watch?: ExitWatch,
): Promise<EndRecord | undefined> {
  const abandoned = new Promise<void>((resolve) => {
    if (abandon.aborted) resolve();
    abandon.addEventListener('abort', () => resolve(), { once: true });
  });
  // The supervisor's exit without polling: the nursery's report for one this worker started, a
  // pidfd the nursery holds for one an earlier worker started. Else (or `unwatched`) the loop polls.
  const exit =
    exited !== undefined
      ? exited.then(() => 'exited' as const)
      : watch?.(record.supervisorPid, record.supervisorStart);
  if (exit !== undefined) {
    const outcome = await Promise.race([exit, abandoned.then(() => 'abandoned' as const)]);
    if (outcome === 'abandoned' || abandon.aborted) return undefined;
    // A nursery that died settles `exited` of the supervisors it started: one still alive is polled.
    if (outcome === 'exited' && !isSameProcess(record, 'supervisor'))
      return endOrLost(files, record, LostReason.supervisorKilled);
  }
  polling++;
  try {
    for (;;) {
      const end = await readEnd(files.exit);
      if (end) return end;
      if (abandon.aborted) return undefined;
      if (!isSameProcess(record, 'supervisor')) return endOrLost(files, record, LostReason.supervisorKilled);
      await Promise.race([sleep(checkIntervalMs()), abandoned]);
    }
  } finally {
    polling--;
  }
}

/**
 * Room for what an answer adds to the output (the `[stderr]` header, its markers and status lines):
 * an output this close to what its caller shows may be cut all the same.
 */
const ANSWER_LINES_BYTES = 1024;

/**
 * The outcome a recorded end stands for, with each stream's tail read through `readers`. It names
 * its spill files (`spillFiles`) when they stay: a background task's, and a foreground run's whose
 * output is longer than its caller shows (`shownOutputBytes`, less room for the answer's own
 * lines), for the line that names them where the answer's middle was cut.
 */
export async function outcomeOf(
  end: EndRecord,
  files: TaskFiles,
  readers: SpillReaders,
  outputLimitBytes: number,
  terminals?: TerminalLogs,
  spec: Pick<CommandSpec, 'background' | 'shownOutputBytes'> = { background: false },
): Promise<CommandOutcome> {
  const stdout = streamTail(readers.stdout, files.stdout, outputLimitBytes);
  const stderr = streamTail(readers.stderr, files.stderr, outputLimitBytes);
  const terminal = await terminalEnd(files, outputLimitBytes, terminals);
  const { shownOutputBytes } = spec;
  const keepFiles =
    spec.background ||
    (shownOutputBytes !== undefined && stdout.bytes + stderr.bytes + ANSWER_LINES_BYTES > shownOutputBytes);
  return {
    exitCode: end.signal === undefined ? (end.exitCode ?? null) : null,
    signal: end.signal === undefined ? null : signalName(end.signal),
    stdout,
    stderr,
    host: os.hostname(),
    ...(end.stopped === undefined ? {} : { stoppedWhileRunning: end.stopped }),
    ...limitsOf(end, files),
    ...(terminal ? { terminal } : {}),
    ...(keepFiles ? { spillFiles: { stdout: files.stdout, stderr: files.stderr } } : {}),
  };
}

/**
 * A terminal task's last screen and what scrolled off it, rendered from its whole log (undefined
 * for a task without a terminal). A log that cannot be rendered leaves it out: the raw output stays.
 */
async function terminalEnd(
  files: TaskFiles,
  limitChars: number,
  terminals = new TerminalLogs(),
): Promise<TerminalEnd | undefined> {
  if (!TerminalLogs.isTerminal(files)) return undefined;
  try {
    return await terminals.end(files, limitChars);
  } catch {
    return undefined;
  } finally {
    terminals.forget(files.taskId);
  }
}

/** The limits the end record says the command ran into, and the disk cap it was ended for (its mark). */
function limitsOf(end: EndRecord, files: TaskFiles): { limits?: LimitsReached } {
  const limits: LimitsReached = {};
  if (end.outputCapped?.length && end.outputMax)
    limits.output = { streams: end.outputCapped, bytes: end.outputMax };
  if (end.outputFailed && Object.keys(end.outputFailed).length > 0) limits.outputFailed = end.outputFailed;
  if (end.oomKills && end.memoryMax) limits.memory = { bytes: end.memoryMax, kills: end.oomKills };
  if (end.pidsMaxHits && end.pidsMax) limits.processes = { limit: end.pidsMax };
  const disk = diskCapOf(end, files);
  if (disk) limits.disk = disk;
  return Object.keys(limits).length > 0 ? { limits } : {};
}
