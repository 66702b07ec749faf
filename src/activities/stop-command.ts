import { Context } from '@temporalio/activity';
import type { AttachedTasks } from '../command-host/attached-tasks.js';
import type { ExecutorConfig } from '../command-host/executor-config.js';
import { hostMetrics } from '../command-host/host-metrics.js';
import { closeReaders, ensurePrivateDir, openReaders } from '../command-host/spill/spill-files.js';
import {
  type ExitWatch,
  outcomeOf,
  startedRecord,
  waitForEnd,
  withLastOutput,
} from '../command-host/supervisor/command-end.js';
import { endGroup, warnForcedEnd } from '../command-host/supervisor/process-groups.js';
import { isThisProcess } from '../command-host/supervisor/process-identity.js';
import {
  readRecord,
  type SupervisorRecord,
  writeTombstone,
} from '../command-host/supervisor/supervisor-records.js';
import { readAttempt, type TaskFiles, taskFiles } from '../command-host/supervisor/task-files.js';
import { KILL_GRACE_MS } from '../shared/limits.js';
import type { CommandSpec, StopResult } from '../shared/task.js';

/** How long a stop waits for the end after SIGKILL before it gives up (and is retried). */
const STOP_SETTLE_MS = 10_000;

/**
 * Stops a command when no attempt of the command activity is running to hear a kill (its host's
 * worker was down): cancelling such an activity completes on the server and reaches no worker, so
 * the kill comes to the host as an activity of its own. Ends the process group (SIGTERM through
 * the supervisor, SIGKILL after the grace) and returns the recorded end; a task no supervisor ever
 * claimed gets a tombstone, so no attempt can start it later.
 */
export function createStopCommand(config: ExecutorConfig, attached: AttachedTasks, watch?: ExitWatch) {
  return async function stopCommand(spec: CommandSpec): Promise<StopResult> {
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
    return stopClaimed(spec, files, toStop).catch((err: unknown) =>
      withLastOutput(err, files, toStop, config.hostQueue),
    );
  };

  /**
   * An attempt of this worker process follows the command, or did: it reports the end itself (a
   * foreground one has taken its spill files with it, so this stop's tails may be empty). Asked
   * at the end, so an attempt that attached meanwhile counts.
   */
  async function followedHere(taskId: string, files: TaskFiles): Promise<boolean> {
    if (attached.has(taskId)) return true;
    const worker = (await readAttempt(files.attempt).catch(() => undefined))?.worker;
    return worker !== undefined && isThisProcess(worker);
  }

  /** Ends a claimed task's command (unless its end is recorded) and returns that end. */
  async function stopClaimed(
    spec: CommandSpec,
    files: TaskFiles,
    claimed: SupervisorRecord,
  ): Promise<StopResult> {
    const started = await startedRecord(files, claimed);
    const { record } = started;
    let { end } = started;
    if (end === undefined) {
      const cancelSigkill = endGroup(record, warnForcedEnd(Context.current().log, spec.taskId));
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
    const readers = await openReaders(files);
    try {
      const outcome = await outcomeOf(end, files, readers, config.outputLimitBytes, attached.terminals);
      return (await followedHere(spec.taskId, files))
        ? { kind: 'ended', outcome }
        : { kind: 'ended', outcome, unattended: true };
    } finally {
      await closeReaders(readers);
    }
  }
}
