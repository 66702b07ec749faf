import { Context } from '@temporalio/activity';
import { KILL_GRACE_MS } from '../shared/limits.js';
import type { CommandSpec, StopResult } from '../shared/task.js';
import {
  closeReaders,
  type ExitWatch,
  openReaders,
  outcomeOf,
  startedRecord,
  waitForEnd,
  withLastOutput,
} from './command-end.js';
import type { ExecutorConfig } from './executor-config.js';
import { endGroup, warnForcedEnd } from './process-groups.js';
import type { AttachedTasks } from './run-command.js';
import { ensurePrivateDir } from './spill-files.js';
import { readRecord, type SupervisorRecord, writeTombstone } from './supervisor-records.js';
import { type TaskFiles, taskFiles } from './task-files.js';

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
      const outcome = await outcomeOf(end, files, readers, config.outputLimitBytes);
      // Asked at the end: an attempt attached now reports this end itself.
      return attached.has(spec.taskId)
        ? { kind: 'ended', outcome }
        : { kind: 'ended', outcome, unattended: true };
    } finally {
      await closeReaders(readers);
    }
  }
}
