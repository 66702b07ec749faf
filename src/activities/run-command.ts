import fs, { type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  type AttachedAttempt,
  type AttachedTasks,
  movedToBackground,
  type TaskRuns,
} from '../command-host/attached-tasks.js';
import { taskCgroups } from '../command-host/containment/cgroups.js';
import { taskEnv } from '../command-host/containment/command-env.js';
import { assertCommandAllowed } from '../command-host/containment/deny-commands.js';
import { type Sandbox, SandboxWorkdirError } from '../command-host/containment/sandbox.js';
import type { SessionIsolation, SessionLaunch } from '../command-host/containment/session-isolation.js';
import type { ExecutorConfig } from '../command-host/executor-config.js';
import { hostMetrics } from '../command-host/host-metrics.js';
import { startProgressHeartbeats } from '../command-host/progress-heartbeats.js';
import {
  closeReaders,
  ensurePrivateDir,
  openReaders,
  openSpillWriter,
} from '../command-host/spill/spill-files.js';
import { SpillSweeper } from '../command-host/spill/spill-sweeper.js';
import {
  commandLost,
  type ExitWatch,
  LostReason,
  outcomeOf,
  startedRecord,
  waitForEnd,
  withLastOutput,
} from '../command-host/supervisor/command-end.js';
import { endGroup, signalSupervisor, warnForcedEnd } from '../command-host/supervisor/process-groups.js';
import { thisProcess } from '../command-host/supervisor/process-identity.js';
import { type SpawnReport, spawnSupervisor } from '../command-host/supervisor/supervisor.js';
import type { SupervisorNursery } from '../command-host/supervisor/supervisor-nursery.js';
import { readRecord, type SupervisorRecord } from '../command-host/supervisor/supervisor-records.js';
import { rememberAttempt, type TaskFiles, taskFiles } from '../command-host/supervisor/task-files.js';
import { answerCursorQueries } from '../command-host/terminal/terminal-queries.js';
import { loadBashGrammar } from '../policy/bash-grammar.js';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS } from '../shared/limits.js';
import { AttemptFailureType, type CommandOutcome, type CommandSpec, RunFailureType } from '../shared/task.js';

/**
 * A foreground run's result holds all of its output unless it names a spill file: its files may
 * go soon. Not now: this worker may die before the server has the result, and the attempt after it
 * reads the output again from them. The mark lets the sweeper take them after the lost window.
 */
async function markForegroundDone(
  spec: CommandSpec,
  files: TaskFiles,
  outcome: CommandOutcome,
): Promise<void> {
  if (!spec.background && !outcome.stdout.spillPath && !outcome.stderr.spillPath)
    await fs.writeFile(files.foregroundDone, '', { mode: 0o600 });
}

/** The longest delay Node's timers keep (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * Runs one command to its end, exactly once per task on this host, whichever attempt this is. The
 * first attempt starts a supervisor (which claims the task exclusively before the command starts);
 * any later attempt (after a worker restart) re-attaches to it, or returns the end it recorded, and
 * never starts the command again. Output goes to spill files and is heartbeated. A kill or timeout
 * from the workflow ends the process group and still returns the outcome; a worker shutdown leaves
 * the command running for the next attempt; a closed workflow run ends it.
 */
export function createRunCommand(
  config: ExecutorConfig,
  runs: TaskRuns,
  attached: AttachedTasks,
  nursery?: SupervisorNursery,
) {
  const sweeper = new SpillSweeper(config);
  // The deny rules read commands with the bash grammar: load it now, not on the first command (a
  // failure here shows again, as the command's own, when a command is checked).
  if (config.denyCommands) loadBashGrammar().catch(() => undefined);
  const moved = (taskId: string) => movedToBackground(runs, taskId);
  return async function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
    // An attempt on a shared queue that another host's worker took: that host has no records of
    // this task. Refuse before anything starts; the workflow goes on on the host's own queue.
    if (spec.hostQueue !== undefined && spec.hostQueue !== config.hostQueue) {
      throw ApplicationFailure.retryable(
        `this worker is not the host of task ${spec.taskId}`,
        AttemptFailureType.wrongHost,
      );
    }
    return attached.hold(
      spec.taskId,
      Context.current().info.workflowExecution?.runId ?? '',
      async (attempt) => {
        // Each step at DEBUG (DURABLE_BASH_LOG_LEVEL=DEBUG): where an attempt stopped, when one goes quiet.
        Context.current().log.debug('command attempt started', { taskId: spec.taskId });
        return runAttempt(spec, attempt);
      },
    );
  };

  async function runAttempt(spec: CommandSpec, attempt: AttachedAttempt): Promise<CommandOutcome> {
    await ensurePrivateDir(config.spillDir);
    // Housekeeping must never hold up or fail a command; a failed sweep is retried later.
    sweeper.sweepIfDue().catch(() => undefined);
    const files = taskFiles(config.spillDir, spec.taskId);
    // Before anything starts, so a restarted worker can find this attempt (see the orphan scan).
    const { info } = Context.current();
    await rememberAttempt(files, {
      namespace: info.activityNamespace,
      hostQueue: config.hostQueue,
      taskToken: Buffer.from(info.taskToken).toString('base64'),
      worker: thisProcess(),
    });
    Context.current().log.debug('command attempt remembered', { taskId: spec.taskId });
    let record = await readRecord(files.state);
    let exited: Promise<void> | undefined;
    if (record === undefined) {
      // An earlier attempt heartbeated (or the workflow knows it started), so the command ran: its records were lost
      // (spill directory wiped or replaced). Starting it again would run it twice.
      if (info.heartbeatDetails !== undefined || spec.commandStarted)
        throw commandLost(LostReason.recordsGone, info.heartbeatDetails);
      ({ exited } = await startSupervised(spec, files));
      record = await readRecord(files.state);
      if (record === undefined) throw commandLost(LostReason.supervisorKilledBeforeStart);
      if (exited !== undefined) hostMetrics.commandStarted();
    } else {
      hostMetrics.reattached();
    }
    sweeper.active.add(files.stdout).add(files.stderr);
    try {
      const claimed = record;
      return await attach(spec, files, claimed, exited, attempt).catch((err: unknown) =>
        withLastOutput(err, files, claimed, config.hostQueue),
      );
    } finally {
      sweeper.active.delete(files.stdout);
      sweeper.active.delete(files.stderr);
    }
  }

  /**
   * Starts the command under a new supervisor. `exited` is the supervisor's exit, or undefined when
   * another attempt's supervisor had claimed the task first (attach to that one).
   */
  async function startSupervised(
    spec: CommandSpec,
    files: TaskFiles,
  ): Promise<{ exited: Promise<void> | undefined }> {
    await assertCommandAllowed(spec.command, config.denyCommands);
    await assertWorkdir(spec.workdir);
    const isolated = config.isolation ? await sessionLaunch(config.isolation, spec) : undefined;
    const launcher = config.sandbox ? sandboxLauncher(config.sandbox, spec.workdir) : isolated?.launcher;
    // The launcher and the inner supervisor the command runs under, if any.
    const launched = {
      ...(config.sandbox && launcher ? { launcher, innerBinary: config.sandbox.supervisor } : {}),
      ...(config.isolation && isolated
        ? { launcher: isolated.launcher, inner: isolated.inner, innerBinary: config.isolation.supervisor }
        : {}),
    };
    // The nursery's warm supervisors start no terminal: a terminal task's supervisor is spawned.
    if (nursery && !spec.terminal) {
      // The nursery's supervisor opens the spill files itself (and checks them as openSpillWriter does).
      const report = await nursery.launch({
        files,
        command: spec.command,
        cwd: spec.workdir,
        env: taskEnv(config),
        ...(spec.keepStdinOpen ? { keepStdinOpen: true } : {}),
        ...launched,
      });
      return { exited: startedOrThrow(report) };
    }
    const writers: FileHandle[] = [];
    try {
      writers.push(await openSpillWriter(files.stdout), await openSpillWriter(files.stderr));
      const [stdoutFile, stderrFile] = writers as [FileHandle, FileHandle];
      const report = await spawnSupervisor({
        files,
        command: spec.command,
        cwd: spec.workdir,
        env: taskEnv(config, process.env, { terminal: spec.terminal !== undefined }),
        cgroups: taskCgroups(config.containment, spec.taskId),
        limits: config.containment.limits,
        ...(launched.launcher ? { ...launched, binary: launched.innerBinary } : {}),
        stdoutFd: stdoutFile.fd,
        stderrFd: stderrFile.fd,
        ...(spec.keepStdinOpen ? { keepStdinOpen: true } : {}),
        ...(spec.terminal ? { terminal: spec.terminal } : {}),
      });
      return { exited: startedOrThrow(report) };
    } finally {
      await Promise.all(writers.map((writer) => writer.close().catch(() => undefined)));
    }
  }

  /** Follows a claimed task to its end: heartbeats, kills, the foreground deadline. */
  async function attach(
    spec: CommandSpec,
    files: TaskFiles,
    claimed: SupervisorRecord,
    exited: Promise<void> | undefined,
    attempt: AttachedAttempt,
  ): Promise<CommandOutcome> {
    const context = Context.current();
    const { record, end: recorded } = await startedRecord(files, claimed);
    const readers = await openReaders(files);
    try {
      if (recorded) {
        const outcome = await outcomeOf(
          recorded,
          files,
          readers,
          config.outputLimitBytes,
          attached.terminals,
        );
        await markForegroundDone(spec, files, outcome);
        return outcome;
      }

      let cancelSigkill: (() => void) | undefined;
      let keepSigkill = false;
      const kill = () => {
        cancelSigkill ??= endGroup(record, warnForcedEnd(context.log, spec.taskId));
      };
      const heartbeats = await startProgressHeartbeats(
        context,
        {
          pid: record.pid,
          startedAtMs: record.startedAtMs,
          host: os.hostname(),
          hostQueue: config.hostQueue,
          files,
          readers,
          spillRetentionMs: config.spillRetentionMs,
        },
        heartbeatIntervalMs(spec),
      ).catch((err: unknown) => {
        // Nothing could report or stop this command: end it rather than leave it behind.
        signalSupervisor(record, 'SIGUSR1');
        throw err;
      });
      attempt.afterRead = () => void heartbeats.afterRead().catch(() => undefined);
      // While this worker follows a terminal task, its emulator answers the program's cursor queries.
      const stopAnswering = spec.terminal
        ? await answerCursorQueries(files, attached.terminals, exited !== undefined)
        : undefined;
      context.log.debug('command attempt following', { taskId: spec.taskId, pid: record.pid });

      const abandon = new AbortController();
      /** Lets go of a foreground command whose run moved to the background (it keeps running). */
      const release = (): never => {
        clearTimeout(deadline);
        abandon.abort();
        throw ApplicationFailure.create({
          type: AttemptFailureType.released,
          message: `task ${spec.taskId} moved to the background`,
          nonRetryable: true,
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
              if (!spec.background && (await moved(spec.taskId))) release();
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
          void moved(spec.taskId).then((isMoved) => {
            if (isMoved) stopWith(async () => release());
          });
        };
        // The host's closed-run check, likewise.
        attempt.runClosed = () =>
          stopWith(() => letGo(new Error(`the run of task ${spec.taskId} has closed`), true));
      });

      // The foreground timeout, kept here as well (from the command's own start, so a re-attached
      // attempt keeps the original deadline): the workflow's timer reaches this activity only in
      // a heartbeat's response. The timer stays the authority when no worker runs the command.
      // A run moved to the background keeps its command past the deadline (the move's
      // cancellation of this attempt may still be on its way).
      let timedOut = false;
      const remainingMs =
        spec.timeoutMs === undefined ? undefined : record.startedAtMs + spec.timeoutMs - Date.now();
      const deadline =
        remainingMs === undefined || remainingMs > MAX_TIMER_DELAY_MS
          ? undefined
          : setTimeout(
              () => {
                void moved(spec.taskId).then((isMoved) => {
                  if (isMoved) return;
                  timedOut = true;
                  kill();
                });
              },
              Math.max(0, remainingMs),
            );

      try {
        const end = await Promise.race([
          waitForEnd(files, record, exited, abandon.signal, nursery && exitWatchOf(nursery)),
          leftRunning,
        ]);
        if (end === undefined) throw new Error('attempt abandoned');
        clearTimeout(deadline);
        const outcome = await outcomeOf(end, files, readers, config.outputLimitBytes, attached.terminals);
        await markForegroundDone(spec, files, outcome);
        return { ...outcome, ...(timedOut ? { timedOut } : {}) };
      } finally {
        abandon.abort();
        heartbeats.stop();
        stopAnswering?.();
        attempt.afterRead = () => undefined;
        if (!keepSigkill) cancelSigkill?.();
        clearTimeout(deadline);
      }
    } finally {
      await closeReaders(readers);
    }
  }
}

/** The supervisor's exit when it started the command, undefined when another held the task; a spawn that failed is the task's end. */
function startedOrThrow(report: SpawnReport): Promise<void> | undefined {
  if (report.kind === 'error') {
    hostMetrics.supervisorStartFailed();
    throw ApplicationFailure.create({
      type: RunFailureType.spawnFailed,
      message: `could not start bash: ${report.message}`,
      nonRetryable: true,
    });
  }
  return report.kind === 'started' ? report.exited : undefined;
}

/** The heartbeat cadence: the floor's, or quicker for a run whose heartbeat timeout is shorter (2.5 beats a timeout). */
function heartbeatIntervalMs(spec: CommandSpec): number {
  return Math.min(HEARTBEAT_INTERVAL_MS, (spec.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS) / 2.5);
}

/** How the command runs in its session, or the task's end when its workdir or its session cannot be had. */
async function sessionLaunch(isolation: SessionIsolation, spec: CommandSpec): Promise<SessionLaunch> {
  try {
    return await isolation.launch(spec);
  } catch (err) {
    throw ApplicationFailure.create({
      type: RunFailureType.spawnFailed,
      message:
        err instanceof SandboxWorkdirError
          ? err.message.replace('in the sandbox', 'by a session')
          : `the command's session could not be set up: ${err instanceof Error ? err.message : String(err)}`,
      nonRetryable: true,
    });
  }
}

/** The sandbox's launcher for a workdir, or the task's end when the workdir would open it up. */
function sandboxLauncher(sandbox: Sandbox, workdir: string): string[] {
  try {
    return sandbox.launcher(workdir);
  } catch (err) {
    if (!(err instanceof SandboxWorkdirError)) throw err;
    throw ApplicationFailure.create({
      type: RunFailureType.spawnFailed,
      message: err.message,
      nonRetryable: true,
    });
  }
}

async function assertWorkdir(workdir: string): Promise<void> {
  const problem = await workdirProblem(workdir);
  if (problem !== undefined) {
    throw ApplicationFailure.create({
      type: RunFailureType.workdirNotFound,
      message: problem,
      nonRetryable: true,
    });
  }
}

/** Why a command cannot run in `workdir`, in one line that names it; undefined when it can. */
async function workdirProblem(workdir: string): Promise<string | undefined> {
  const stat = await fs.stat(workdir).catch(() => undefined);
  if (stat?.isDirectory()) return undefined;
  if (stat !== undefined) return `workdir is not a directory: ${onePath(workdir)}`;
  const target = await fs.readlink(workdir).catch(() => undefined);
  if (target !== undefined)
    return `workdir is a dangling symbolic link: ${onePath(workdir)} -> ${onePath(target)}`;
  return `workdir does not exist or is not a directory: ${onePath(workdir)}`;
}

/** A path as it is, or JSON-quoted when it holds a line break or another control character. */
function onePath(file: string): string {
  return /[\p{Cc}\u2028\u2029]/u.test(file) ? JSON.stringify(file) : file;
}

/** The nursery's watch of a supervisor's exit, as `waitForEnd` takes it. */
export function exitWatchOf(nursery: SupervisorNursery): ExitWatch {
  return (pid, start) => nursery.watchExit(pid, start);
}
