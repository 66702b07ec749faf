import fs, { type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { KILL_GRACE_MS } from '../shared/limits.js';

/** The longest delay Node's timers keep (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

import { type CommandOutcome, type CommandSpec, RunFailureType } from '../shared/task.js';
import type { ExecutorConfig } from './executor-config.js';
import { commandEnv, signalGroup, spawnGroup } from './process-group.js';
import { startProgressHeartbeats } from './progress-heartbeats.js';
import { createSpillFile, ensurePrivateDir, openSpillReader, streamTail } from './spill-files.js';
import { SpillSweeper } from './spill-sweeper.js';

/**
 * Runs one command to its end. Output goes to spill files; progress (pid, byte counts, bounded
 * tails) is heartbeated. A cancellation the workflow requested (a kill or a timeout) ends the
 * process group and still returns the outcome; any other cancellation (worker shutdown, the run
 * closed) leaves the process alone.
 */
export function createRunCommand(config: ExecutorConfig) {
  const sweeper = new SpillSweeper(config);
  return async function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
    await assertWorkdir(spec.workdir);
    await ensurePrivateDir(config.spillDir);
    // Housekeeping must never hold up or fail a command; a failed sweep is retried later.
    sweeper.sweepIfDue().catch(() => undefined);
    const files = {
      stdout: path.join(config.spillDir, `${spec.taskId}.stdout`),
      stderr: path.join(config.spillDir, `${spec.taskId}.stderr`),
    };
    sweeper.active.add(files.stdout).add(files.stderr);
    try {
      return await runInSpillFiles(spec, files);
    } finally {
      sweeper.active.delete(files.stdout);
      sweeper.active.delete(files.stderr);
    }
  };

  /**
   * Runs the command with its output going to `files`, the rest as `runCommand` says. The files
   * are read back through handles opened here, which keep working if a file is unlinked.
   */
  async function runInSpillFiles(
    spec: CommandSpec,
    files: { stdout: string; stderr: string },
  ): Promise<CommandOutcome> {
    const stdoutFile = await createSpillFile(files.stdout);
    const handles: FileHandle[] = [stdoutFile];
    try {
      const stderrFile = await createSpillFile(files.stderr);
      handles.push(stderrFile);
      const stdoutReader = await openSpillReader(files.stdout);
      handles.push(stdoutReader);
      const stderrReader = await openSpillReader(files.stderr);
      handles.push(stderrReader);
      const readers = { stdout: stdoutReader, stderr: stderrReader };
      return await runWithReaders(spec, files, stdoutFile, stderrFile, readers);
    } finally {
      // Closing twice is harmless: the writers are closed as soon as the command has them.
      await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
    }
  }

  /** Runs the command into its spill files, reading them back through `readers`. */
  async function runWithReaders(
    spec: CommandSpec,
    files: { stdout: string; stderr: string },
    stdoutFile: FileHandle,
    stderrFile: FileHandle,
    readers: { stdout: FileHandle; stderr: FileHandle },
  ): Promise<CommandOutcome> {
    const context = Context.current();
    const startedAtMs = Date.now();
    const host = os.hostname();
    let running: ReturnType<typeof spawnGroup>;
    try {
      running = spawnGroup({
        command: spec.command,
        cwd: spec.workdir,
        env: commandEnv(config.secretEnv),
        stdoutFd: stdoutFile.fd,
        stderrFd: stderrFile.fd,
      });
    } finally {
      await Promise.all([stdoutFile.close(), stderrFile.close()]);
    }
    const { child, exit } = running;
    const pid = child.pid;
    if (pid === undefined) {
      const cause = await exit.then(
        () => undefined,
        (err: Error) => err,
      );
      throw ApplicationFailure.create({
        type: RunFailureType.spawnFailed,
        message: `could not start bash: ${cause?.message ?? 'no pid'}`,
        nonRetryable: true,
      });
    }

    const stopHeartbeats = await startProgressHeartbeats(context, {
      pid,
      startedAtMs,
      host,
      files,
      readers,
      spillRetentionMs: config.spillRetentionMs,
    }).catch((err: unknown) => {
      // Nothing could report or stop this command: end it rather than leave it behind.
      signalGroup(pid, 'SIGKILL');
      throw err;
    });

    let killing = false;
    let exited = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (killing || exited) return;
      killing = true;
      signalGroup(pid, 'SIGTERM');
      graceTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    // A kill or timeout from the workflow ends the group; any other cancellation (worker shutdown,
    // the run closed) ends only this attempt and leaves the command running.
    const leftRunning = context.cancelled.catch((err: unknown) => {
      if (!context.cancellationDetails?.cancelRequested) throw err;
      kill();
      return new Promise<never>(() => undefined);
    });
    // The foreground timeout, kept here as well: the workflow's timer reaches this activity only in
    // a heartbeat's response, up to IDLE_HEARTBEAT_INTERVAL_MS late. The timer stays the authority
    // when this worker is gone.
    // Node fires a longer delay at once, so such a timeout is left to the workflow's timer.
    let timedOut = false;
    const deadline =
      spec.timeoutMs === undefined || spec.timeoutMs > MAX_TIMER_DELAY_MS
        ? undefined
        : setTimeout(() => {
            if (exited) return;
            timedOut = true;
            kill();
          }, spec.timeoutMs);

    try {
      const { exitCode, signal } = await Promise.race([exit, leftRunning]);
      exited = true;
      clearTimeout(deadline);
      // The leader is gone; after a kill, nothing it started may outlive it.
      if (killing) signalGroup(pid, 'SIGKILL');
      const [stdout, stderr] = await Promise.all([
        streamTail(readers.stdout, files.stdout, config.outputLimitBytes),
        streamTail(readers.stderr, files.stderr, config.outputLimitBytes),
      ]);
      if (!spec.background) {
        // A foreground run keeps a spill file only when its result points at it.
        if (!stdout.spillPath) await fs.rm(files.stdout, { force: true });
        if (!stderr.spillPath) await fs.rm(files.stderr, { force: true });
      }
      return { exitCode, signal, stdout, stderr, host, ...(timedOut ? { timedOut } : {}) };
    } finally {
      stopHeartbeats();
      clearTimeout(graceTimer);
      clearTimeout(deadline);
    }
  }
}

async function assertWorkdir(workdir: string): Promise<void> {
  const stat = await fs.stat(workdir).catch(() => undefined);
  if (!stat?.isDirectory()) {
    throw ApplicationFailure.create({
      type: RunFailureType.workdirNotFound,
      message: `workdir does not exist or is not a directory: ${workdir}`,
      nonRetryable: true,
    });
  }
}
