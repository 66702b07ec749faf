/**
 * Following a task's command to its end, in an attempt of the command activity: its progress
 * heartbeated, a kill or the foreground deadline ending its group, the move to the background or a
 * closed run letting go of it, and its outcome read from its records and spill files.
 */
import os from 'node:os';
import { ApplicationFailure, type Context } from '@temporalio/activity';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS } from '../../shared/limits.js';
import { AttemptFailureType, type CommandOutcome, type CommandSpec } from '../../shared/task.js';
import { type AttachedAttempt, movedToBackground, type TaskRuns } from '../attached-tasks.js';
import type { CompiledExecutorOptions } from '../executor-config.js';
import { LineMonitor, type MonitorSink } from '../monitor/line-monitor.js';
import { readProgressIfAny, startProgressHeartbeats } from '../progress-heartbeats.js';
import { closeReaders, openReaders } from '../spill/spill-files.js';
import type { TerminalLogs } from '../terminal/terminal-logs.js';
import { answerCursorQueries } from '../terminal/terminal-queries.js';
import { type ExitWatch, outcomeOf, startedRecord, waitForEnd } from './command-end.js';
import { endGroup, signalSupervisor, warnForcedEnd } from './process-groups.js';
import type { SupervisorRecord } from './supervisor-records.js';
import { markDone, type TaskFiles } from './task-files.js';

/** What following a command needs of its host. */
export interface FollowHost {
  config: Pick<CompiledExecutorOptions, 'hostQueue' | 'outputLimitBytes' | 'spillRetentionMs'>;
  /** The server's answers about the task's run: closed, moved to the background. */
  runs: TaskRuns;
  /** The screens of this host's terminal tasks. */
  terminals: TerminalLogs;
  /** The nursery's watch of a supervisor's exit, when the host has a nursery. */
  watch: ExitWatch | undefined;
  /** Where monitors send their batches; a host without one monitors nothing (the scripted host). */
  monitors?: MonitorSink;
}

/** The command an attempt follows, and the attempt. */
export interface FollowedCommand {
  spec: CommandSpec;
  files: TaskFiles;
  /** The supervisor's record of its claim on the task. */
  claimed: SupervisorRecord;
  /** The supervisor's exit, for one this attempt started; undefined for one it re-attached to. */
  exited: Promise<void> | undefined;
  attempt: AttachedAttempt;
  /** The attempt's activity context: heartbeats, cancellation, log. */
  context: Context;
}

/**
 * Follows a claimed task's command to its end and returns its outcome: heartbeats its progress,
 * ends its group on a kill or at the foreground deadline, lets go of it when its run moved to the
 * background or closed, or when the worker shuts down (the command keeps running for the next attempt).
 */
export async function followCommand(host: FollowHost, command: FollowedCommand): Promise<CommandOutcome> {
  const { config, runs, terminals } = host;
  const { spec, files, claimed, exited, attempt, context } = command;
  const { record, end: recorded } = await startedRecord(files, claimed);
  const readers = await openReaders(files);
  const monitor = await LineMonitor.ofTask(host.monitors, spec, files);
  try {
    if (recorded) {
      // Lines printed while no worker ran are matched now, and sent before the end is reported.
      await monitor?.finish();
      const outcome = {
        ...(await outcomeOf(recorded, files, readers, config.outputLimitBytes, terminals, spec)),
        hostQueue: config.hostQueue,
      };
      markForegroundDone(spec, files, outcome);
      return monitor?.channel ? { ...outcome, noticeChannel: true } : outcome;
    }
    if (monitor) {
      attempt.monitor = monitor;
      monitor.start();
    }

    let cancelSigkill: (() => void) | undefined;
    let keepSigkill = false;
    const kill = () => {
      cancelSigkill ??= endGroup(record, warnForcedEnd(context.log, spec.taskId));
    };
    const progressSource = {
      pid: record.pid,
      startedAtMs: record.startedAtMs,
      host: os.hostname(),
      hostQueue: config.hostQueue,
      files,
    };
    const heartbeats = await startProgressHeartbeats(
      context,
      { ...progressSource, readers, spillRetentionMs: config.spillRetentionMs },
      heartbeatIntervalMs(spec),
    ).catch((err: unknown) => {
      // Nothing could report or stop this command: end it rather than leave it behind.
      signalSupervisor(record, 'SIGUSR1');
      throw err;
    });
    // While this worker follows a terminal task, its emulator answers the program's cursor queries.
    const stopAnswering = spec.terminal
      ? await answerCursorQueries(files, terminals, exited !== undefined)
      : undefined;
    context.log.debug('command attempt following', { taskId: spec.taskId, pid: record.pid });

    const abandon = new AbortController();
    /** Lets go of a foreground command whose run moved to the background (it keeps running). */
    const release = (): never => {
      clearTimeout(deadline);
      abandon.abort();
      // What reads find on the server until the background attempt's heartbeat at attach.
      const progress = readProgressIfAny({ ...progressSource, readers });
      throw ApplicationFailure.create({
        type: AttemptFailureType.released,
        message: `task ${spec.taskId} moved to the background`,
        nonRetryable: true,
        details: progress === undefined ? [] : [progress],
      });
    };
    /**
     * This attempt is no longer the current one: its run closed (terminated, reset away) and the
     * command must end, or a newer attempt took over and owns it.
     */
    const letGo = async (err: unknown, mayKill: boolean): Promise<never> => {
      if (mayKill && (await runs.isClosed(spec.taskId)) === true) {
        kill();
        keepSigkill = true; // The SIGKILL after the grace must still come.
      }
      abandon.abort();
      throw err;
    };
    let stopping: Promise<never> | undefined;
    const leftRunning = new Promise<never>((_, reject) => {
      const stopWith = (stop: () => Promise<never>) => {
        stopping ??= stop();
        stopping.catch(reject);
      };
      void context.cancelled.catch((err: unknown) => {
        const details = context.cancellationDetails;
        if (details?.cancelRequested) {
          stopWith(async () => {
            // A foreground attempt cancelled because its run moved to the background: let go of
            // the command for the attempt without a deadline that the workflow starts. The
            // workflow's cancellation carries no reason, so the server's record of the move says.
            if (!spec.background && (await movedToBackground(runs, spec.taskId))) release();
            // A kill or timeout from the workflow: end the group, then report the end as usual.
            kill();
            return new Promise<never>(() => undefined);
          });
          return;
        }
        // Only a worker shutdown leaves the command for the next attempt without asking.
        stopWith(() => letGo(err, !details?.workerShutdown));
      });
      // The move's own activity, sooner than a cancellation that waits for a heartbeat's response.
      attempt.release = () => {
        if (spec.background || stopping !== undefined) return;
        void movedToBackground(runs, spec.taskId).then((isMoved) => {
          if (isMoved) stopWith(async () => release());
        });
      };
      // The host's closed-run check, likewise.
      attempt.runClosed = () =>
        stopWith(() => letGo(new Error(`the run of task ${spec.taskId} has closed`), true));
    });

    // The foreground timeout. A run's deadline (`deadlineAtMs`, by this host's clock, which NTP
    // keeps within milliseconds of the server's) is this host's to keep: every attempt, a
    // re-attached one too, ends the command then, and never later than the timeout after the
    // command's own start. A run recorded before that times out by the workflow's timer, which
    // reaches this activity only in a heartbeat's response, so the copy counted from the command's
    // start is kept here for it too. A run moved to the background keeps its command past the
    // deadline (the move's cancellation of this attempt may still be on its way).
    let timedOut = false;
    const remainingMs =
      spec.timeoutMs === undefined
        ? undefined
        : Math.min(
            record.startedAtMs + spec.timeoutMs - Date.now(),
            (spec.deadlineAtMs ?? Number.POSITIVE_INFINITY) - Date.now(),
          );
    const deadline =
      remainingMs === undefined || remainingMs > MAX_TIMER_DELAY_MS
        ? undefined
        : setTimeout(
            () => {
              void movedToBackground(runs, spec.taskId).then((isMoved) => {
                if (isMoved) return;
                timedOut = true;
                kill();
              });
            },
            Math.max(0, remainingMs),
          );

    try {
      const end = await Promise.race([
        waitForEnd(files, record, exited, abandon.signal, host.watch),
        leftRunning,
      ]);
      if (end === undefined) throw new Error('attempt abandoned');
      clearTimeout(deadline);
      // Every matching line is sent before the end: the completion notice comes after them.
      await monitor?.finish();
      const outcome = await outcomeOf(end, files, readers, config.outputLimitBytes, terminals, spec);
      markForegroundDone(spec, files, outcome);
      return {
        ...outcome,
        hostQueue: config.hostQueue,
        ...(timedOut ? { timedOut } : {}),
        ...(monitor?.channel ? { noticeChannel: true } : {}),
      };
    } finally {
      abandon.abort();
      heartbeats.stop();
      stopAnswering?.();
      if (!keepSigkill) cancelSigkill?.();
      clearTimeout(deadline);
    }
  } finally {
    monitor?.stop();
    if (attempt.monitor === monitor) attempt.monitor = undefined;
    // Not awaited: the outcome is read, and the result need not wait for the thread pool's closes
    // (0.3 ms at a foreground run's end). closeReaders never rejects.
    void closeReaders(readers);
  }
}

/**
 * A foreground run's result holds all of its output unless it names a spill file (a cut tail, or
 * `spillFiles` for a caller that shows less): its files may go soon. Not now: this worker may die
 * before the server has the result, and the attempt after it reads the output again from them. The
 * mark (the end record made read-only: a file's mode costs microseconds where a new file cost a
 * quarter of a millisecond on this project's test machine) lets the sweeper take them after the
 * lost window.
 */
function markForegroundDone(spec: CommandSpec, files: TaskFiles, outcome: CommandOutcome): void {
  if (!spec.background && !outcome.stdout.spillPath && !outcome.stderr.spillPath && !outcome.spillFiles)
    markDone(files);
}

/** The longest delay Node's timers keep (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** The heartbeat cadence: the floor's, or quicker for a run whose heartbeat timeout is shorter (2.5 beats a timeout). */
function heartbeatIntervalMs(spec: CommandSpec): number {
  return Math.min(HEARTBEAT_INTERVAL_MS, (spec.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS) / 2.5);
}
