/**
 * A kill that comes to the command's host as an activity of its own, while no attempt of the
 * command activity follows the command: the group ended through its supervisor, the end awaited
 * and returned, or a tombstone for a task no supervisor ever claimed.
 */
import type { Logger } from '@temporalio/common';
import { KILL_GRACE_MS } from '../../shared/limits.js';
import type { CommandSpec, StopResult } from '../../shared/task.js';
import type { AttachedTasks } from '../attached-tasks.js';
import type { CompiledExecutorOptions } from '../executor-config.js';
import { hostMetrics } from '../host-metrics.js';
import { LineMonitor, type MonitorSink } from '../monitor/line-monitor.js';
import { closeReaders, ensurePrivateDir, openReaders } from '../spill/spill-files.js';
import { type ExitWatch, outcomeOf, startedRecord, waitForEnd, withLastOutput } from './command-end.js';
import { endGroup, warnForcedEnd } from './process-groups.js';
import { isThisProcess } from './process-identity.js';
import { readRecord, type SupervisorRecord, writeTombstone } from './supervisor-records.js';
import { readAttempt, type TaskFiles, taskFiles } from './task-files.js';

/** How long a stop waits for the end after SIGKILL before it gives up (and is retried). */
const STOP_SETTLE_MS = 10_000;

/** What a stop needs of its host. */
export interface StopHost {
  config: Pick<CompiledExecutorOptions, 'spillDir' | 'hostQueue' | 'outputLimitBytes'>;
  /** The attempts this worker follows (a stop's end is theirs to report) and the terminals' screens. */
  attached: AttachedTasks;
  /** The nursery's watch of a supervisor's exit, when the host has a nursery. */
  watch: ExitWatch | undefined;
  /** Where monitors send their batches: a stop that reports the end sends the last matches first. */
  monitors?: MonitorSink;
}

/**
 * Stops a task's command on its host: ends the process group (SIGTERM through the supervisor,
 * SIGKILL after the grace) and returns the recorded end; a task no supervisor ever claimed gets a
 * tombstone, so no attempt can start it later.
 */
export async function stopCommandOnHost(
  host: StopHost,
  spec: CommandSpec,
  log: Pick<Logger, 'warn'>,
): Promise<StopResult> {
  const { config } = host;
  await ensurePrivateDir(config.spillDir);
  hostMetrics.stopServed();
  const files = taskFiles(config.spillDir, spec.taskId);
  let claimed = await readRecord(files.state);
  if (claimed === undefined) {
    if (await writeTombstone(files.state)) return { kind: 'never-started' };
    claimed = await readRecord(files.state);
  }
  if (claimed === undefined || claimed.tombstone) return { kind: 'never-started' };
  const toStop = claimed;
  return stopClaimed(host, spec, files, toStop, log).catch((err: unknown) =>
    withLastOutput(err, files, toStop, config.hostQueue),
  );
}

/**
 * An attempt of this worker process follows the command, or did: it reports the end itself (a
 * foreground one has taken its spill files with it, so this stop's tails may be empty). Asked
 * at the end, so an attempt that attached meanwhile counts.
 */
async function followedHere(attached: AttachedTasks, taskId: string, files: TaskFiles): Promise<boolean> {
  if (attached.has(taskId)) return true;
  const worker = (await readAttempt(files.attempt).catch(() => undefined))?.worker;
  return worker !== undefined && isThisProcess(worker);
}

/** Ends a claimed task's command (unless its end is recorded) and returns that end. */
async function stopClaimed(
  { config, attached, watch, monitors }: StopHost,
  spec: CommandSpec,
  files: TaskFiles,
  claimed: SupervisorRecord,
  log: Pick<Logger, 'warn'>,
): Promise<StopResult> {
  const started = await startedRecord(files, claimed);
  const { record } = started;
  let { end } = started;
  if (end === undefined) {
    const cancelSigkill = endGroup(record, warnForcedEnd(log, spec.taskId));
    try {
      end = await waitForEnd(
        files,
        record,
        undefined,
        AbortSignal.timeout(KILL_GRACE_MS + STOP_SETTLE_MS),
        watch,
      );
    } finally {
      cancelSigkill();
    }
    if (end === undefined) throw new Error(`task ${spec.taskId}: its command did not end after SIGKILL`);
  }
  // This end may be the run's (no attempt follows the command): every matching line goes first, as
  // an attempt's does (through the attempt's own monitor when one follows it here; finishing twice
  // sends nothing twice).
  const monitor = attached.get(spec.taskId)?.monitor ?? (await LineMonitor.ofTask(monitors, spec, files));
  await monitor?.finish();
  const readers = await openReaders(files);
  try {
    const ended = {
      ...(await outcomeOf(end, files, readers, config.outputLimitBytes, attached.terminals, spec)),
      hostQueue: config.hostQueue,
    };
    const outcome = monitor?.channel ? { ...ended, noticeChannel: true as const } : ended;
    return (await followedHere(attached, spec.taskId, files))
      ? { kind: 'ended', outcome }
      : { kind: 'ended', outcome, unattended: true };
  } finally {
    await closeReaders(readers);
  }
}
