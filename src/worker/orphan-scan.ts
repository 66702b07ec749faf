import fs from 'node:fs/promises';
import {
  ActivityNotFoundError,
  ApplicationFailure,
  type Client,
  type WorkflowExecutionDescription,
  WorkflowNotFoundError,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { Runtime } from '@temporalio/worker';
import type { AttachedTasks, TaskRuns } from '../command-host/attached-tasks.js';
import { progressOnDisk } from '../command-host/supervisor/command-end.js';
import { endGroup, killOrphanedGroup } from '../command-host/supervisor/process-groups.js';
import { currentBootId, isRunning, isThisProcess } from '../command-host/supervisor/process-identity.js';
import {
  isNewerTaskFiles,
  isSameProcess,
  readEnd,
  readRecord,
} from '../command-host/supervisor/supervisor-records.js';
import { readAttempt, taskFiles } from '../command-host/supervisor/task-files.js';
import { ActivityName } from '../shared/activity-names.js';
import { START_SCAN_CONCURRENCY } from '../shared/limits.js';
import { AttemptFailureType, type CommandProgress } from '../shared/task.js';

/** A task's state file as the command activity names it: `<task id>.state`. */
const STATE_FILE = /^(bash-[0-9a-f-]+)\.state$/;

/** A task's attempt file: `<task id>.attempt`. */
const ATTEMPT_FILE = /^(bash-[0-9a-f-]+)\.attempt$/;

const { PendingActivityState } = proto.temporal.api.enums.v1;

/** How long the command activity waits for the server to say whether a run moved to the background. */
const MOVED_CHECK_TIMEOUT_MS = 2_000;

/** Whether tasks' workflows are closed, asked of the server with the worker's own connection. */
export function taskRunsOf(client: Client): TaskRuns {
  return {
    async isClosed(taskId) {
      try {
        const description = await client.workflow.getHandle(taskId).describe();
        return description.status.name !== 'RUNNING';
      } catch (err) {
        // Gone from the server (retention, a deleted namespace): nothing will ever read it.
        if (err instanceof WorkflowNotFoundError) return true;
        return undefined;
      }
    },
    async movedToBackground(taskId) {
      try {
        // Asked before a foreground command is ended: a server that does not answer soon is "unknown".
        const description = await client.withDeadline(Date.now() + MOVED_CHECK_TIMEOUT_MS, () =>
          client.workflow.getHandle(taskId).describe(),
        );
        return description.memo?.background === true;
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * Looks through this host's supervisors for commands no attempt is attached to. A command whose
 * task's workflow closed while no worker was here (terminated, reset away, ended lost) is ended, so
 * nothing runs unowned. At a worker's start, the attempt a crashed worker left running is failed at
 * once, so its retry re-attaches now instead of after the heartbeat timeout; so is one it left
 * before its command started, whose retry starts it; an attempt the server says started but that
 * never reached this worker is failed the same way. Resolves false when some
 * task could not be checked (the server did not answer).
 */
export async function scanSupervisors(options: {
  spillDir: string;
  namespace: string;
  hostQueue: string;
  client: Client;
  attached: AttachedTasks;
  /**
   * Tasks whose attempt this worker failed, by when: their retry has yet to attach here. Checked
   * until it has, even once their command ended (only an attempt reports that end).
   */
  awaitingRetry: Map<string, number>;
  /** Fail the attempts a previous worker process left behind (only at this worker's start). */
  failStaleAttempts: boolean;
  /** The command attempts' heartbeat timeout: an attempt left longer ago than this has timed out. */
  heartbeatTimeoutMs: number;
  /** How long after its start an attempt not attached here is taken as lost (LOST_ATTEMPT_GRACE_MS). */
  lostAttemptGraceMs: number;
}): Promise<boolean> {
  const names = await fs.readdir(options.spillDir).catch(() => [] as string[]);
  const taskIds = names.flatMap((name) => STATE_FILE.exec(name)?.[1] ?? []);
  const present = new Set(taskIds);
  let answered = true;
  // One bad file never stops the scan; an unanswered one asks for another scan soon.
  const unanswered = () => {
    answered = false;
  };
  await fewAtATime(taskIds, async (taskId) => {
    if (options.attached.has(taskId)) {
      options.awaitingRetry.delete(taskId);
      return;
    }
    // Ended, and nothing more is asked of this worker: not even its files are read.
    if (options.attached.settled.has(taskId) && !options.awaitingRetry.has(taskId)) return;
    await checkTask(taskId, options).catch((err: unknown) => {
      // A newer release's task: left alone, said once (not a server that did not answer).
      if (isNewerTaskFiles(err)) warnNewerOnce(taskId, err.message);
      else unanswered();
    });
  });
  if (options.failStaleAttempts) {
    // Attempts a crashed worker left before any supervisor claimed their task (no state file).
    const unclaimed = names
      .flatMap((name) => ATTEMPT_FILE.exec(name)?.[1] ?? [])
      .filter((id) => !present.has(id));
    await fewAtATime(unclaimed, (taskId) => failUnclaimedAttempt(taskId, options).catch(unanswered));
  }
  // Forget the tasks whose files are gone (swept).
  for (const taskId of options.awaitingRetry.keys())
    if (!present.has(taskId)) options.awaitingRetry.delete(taskId);
  for (const taskId of options.attached.settled)
    if (!present.has(taskId)) options.attached.settled.delete(taskId);
  return answered;
}

/**
 * Runs `each` on every task, START_SCAN_CONCURRENCY at a time: a host with a thousand tasks must
 * not send the server a thousand describes (and as many failed attempts) at once when its worker
 * starts.
 */
async function fewAtATime(
  taskIds: readonly string[],
  each: (taskId: string) => Promise<void>,
): Promise<void> {
  let next = 0;
  const work = async (): Promise<void> => {
    while (next < taskIds.length) await each(taskIds[next++] as string);
  };
  await Promise.all(Array.from({ length: START_SCAN_CONCURRENCY }, work));
}

/** Tasks of a newer release already named in this process's log. */
const warnedNewer = new Set<string>();

function warnNewerOnce(taskId: string, line: string): void {
  if (warnedNewer.has(taskId)) return;
  warnedNewer.add(taskId);
  Runtime.instance().logger.warn(line, { taskId });
}

async function checkTask(taskId: string, options: Parameters<typeof scanSupervisors>[0]): Promise<void> {
  const files = taskFiles(options.spillDir, taskId);
  // Only tasks of this worker's host queue and namespace: the directory may be shared with workers
  // of other queues or servers, whose tasks this one's server knows nothing of.
  // An unreadable attempt file names no attempt: the task is left alone, as one without it.
  const attempt = await readAttempt(files.attempt).catch(() => undefined);
  if (attempt?.namespace !== options.namespace || attempt.hostQueue !== options.hostQueue) return;
  const record = await readRecord(files.state);
  if (record === undefined || record.tombstone || record.bootId !== currentBootId()) return;
  // Which processes live before the end is read: a supervisor records the end before it exits, so
  // one seen gone has its end on disk by now. (Read the other way round, a command that ended
  // between the two reads, as a stop on this worker ends it, looked like one never to check.)
  const supervisorAlive = isSameProcess(record, 'supervisor');
  const commandAlive = supervisorAlive || isSameProcess(record, 'command');
  const end = await readEnd(files.exit);
  // At a restart the attempt the previous process left is failed at once, one call and no
  // describe, so its retry re-attaches, returns the recorded end or reports the loss now instead
  // of after the heartbeat timeout. One whose command ended longer ago than that has timed out
  // already. Refused (the run closed, or a newer attempt replaced it): asked below which.
  const stale =
    options.failStaleAttempts && (!end || Date.now() - end.endedAtMs < options.heartbeatTimeoutMs);
  // The attempt a previous worker process left running. Its failure carries the command's progress
  // as a heartbeat would: until the retry's heartbeat at attach, it is what reads find on the server.
  if (stale) {
    const token = Buffer.from(attempt.taskToken, 'base64');
    const progress = record.pid > 0 ? await progressOnDisk(files, record, options.hostQueue) : undefined;
    const message = 'the worker running this attempt restarted';
    if (await failAttempt(options.client, token, message, AttemptFailureType.workerRestarted, progress)) {
      options.awaitingRetry.set(taskId, Date.now());
      return;
    }
  }
  const { settled } = options.attached;
  if (!options.awaitingRetry.has(taskId)) {
    // A command whose supervisor died unrecorded: its next attempt reports the loss.
    if (!end && !commandAlive) return;
    // An end an attempt here reported, or older than any attempt lost before it (the heartbeat
    // timeout has ended those).
    if (end && (settled.has(taskId) || Date.now() - end.endedAtMs > options.heartbeatTimeoutMs)) return;
  }
  const description = await describeTask(options.client, taskId);
  if (description === undefined) throw new Error(`no answer about task ${taskId}`);
  const settle = () => {
    options.awaitingRetry.delete(taskId);
    if (end) settled.add(taskId);
  };
  if (description === 'gone' || description.status.name !== 'RUNNING') {
    settle();
    if (end || !commandAlive) return;
    if (supervisorAlive)
      endGroup(record); // Its SIGKILL after the grace must come: nothing waits for this end.
    else killOrphanedGroup(record);
    return;
  }
  // The task went on on another host, restarted after this one was declared lost: what still runs
  // here is no longer its command, and must not run on beside the new one.
  const movedTo = description.memo?.hostQueue;
  if (typeof movedTo === 'string' && movedTo !== options.hostQueue) {
    settle();
    if (end || !commandAlive) return;
    if (supervisorAlive) endGroup(record);
    else killOrphanedGroup(record);
    return;
  }
  const pending = commandAttempt(description);
  if (pending === undefined) {
    // No attempt is pending: the run is past its command (its notice), or a stop settles it.
    settle();
    return;
  }
  const startedAtMs = timestampMs(pending.lastStartedTime);
  if (pending.state !== PendingActivityState.PENDING_ACTIVITY_STATE_STARTED || startedAtMs === undefined)
    return; // Its retry is on its way.
  if (Date.now() - startedAtMs < options.lostAttemptGraceMs) return; // It may still be on its way here.
  // Another worker process of this host follows the command (one shutting down in a redeploy).
  if (attempt.worker !== undefined && !isThisProcess(attempt.worker) && isRunning(attempt.worker)) return;
  // Asked again now the server has answered: an attempt attached meanwhile, or one here let go
  // of the command a moment ago (the server has yet to hear its end), is no lost one; nor is the
  // attempt this worker failed already (its retry is the next one).
  if (options.attached.has(taskId)) return;
  const detachedAtMs = options.attached.detachedAtMs.get(taskId);
  if (detachedAtMs !== undefined && Date.now() - detachedAtMs < options.lostAttemptGraceMs) return;
  const failedAtMs = options.awaitingRetry.get(taskId);
  if (failedAtMs !== undefined && failedAtMs >= startedAtMs) return;
  // Its poll's answer went missing: the server says it runs, no worker of this host follows it.
  const { activityId } = pending;
  if (!activityId) return;
  const lost = { workflowId: taskId, runId: description.runId, activityId };
  if (await failAttempt(options.client, lost, 'the attempt never reached the worker the server gave it to'))
    options.awaitingRetry.set(taskId, Date.now());
}

/**
 * Fails, at a worker's start, the attempt a crashed worker process left on a task no supervisor
 * had claimed yet (it died between remembering the attempt and starting the command), so its retry
 * starts the command now instead of after the heartbeat timeout. A supervisor that claims the task
 * after all (one the nursery had been given) is found by the retry, which attaches to it.
 */
async function failUnclaimedAttempt(
  taskId: string,
  options: Parameters<typeof scanSupervisors>[0],
): Promise<void> {
  if (options.attached.has(taskId)) return;
  const files = taskFiles(options.spillDir, taskId);
  // Older than the heartbeat timeout: timed out already (and most are long finished).
  const remembered = await fs.stat(files.attempt).catch(() => undefined);
  if (remembered === undefined || Date.now() - remembered.mtimeMs > options.heartbeatTimeoutMs) return;
  const attempt = await readAttempt(files.attempt).catch(() => undefined);
  if (attempt?.namespace !== options.namespace || attempt.hostQueue !== options.hostQueue) return;
  // Only a process that is gone: this one's attempt is starting the command now, and a live
  // process's (a worker shutting down in a redeploy) is its own.
  if (attempt.worker === undefined || isThisProcess(attempt.worker) || isRunning(attempt.worker)) return;
  if ((await readRecord(files.state)) !== undefined) return; // Claimed meanwhile: the next scan's.
  await failAttempt(
    options.client,
    Buffer.from(attempt.taskToken, 'base64'),
    'the worker running this attempt restarted before it started the command',
    AttemptFailureType.workerRestartedBeforeStart,
  );
}

/**
 * A task's workflow as the server describes it now; `gone` when the server has no such workflow
 * (retention, a deleted namespace: as closed as a run can be), undefined when it does not answer.
 */
async function describeTask(
  client: Client,
  taskId: string,
): Promise<WorkflowExecutionDescription | 'gone' | undefined> {
  try {
    return await client.workflow.getHandle(taskId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'gone';
    return undefined;
  }
}

/** The run's pending command attempt, if it has one. */
function commandAttempt(description: WorkflowExecutionDescription) {
  const pending = description.raw.pendingActivities ?? [];
  return pending.find((activity) => activity.activityType?.name === ActivityName.runCommand);
}

/** A protobuf timestamp in epoch milliseconds. */
function timestampMs(time: proto.google.protobuf.ITimestamp | null | undefined): number | undefined {
  if (!time?.seconds) return undefined;
  return Number(time.seconds.toString()) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}

/**
 * Fails one attempt of a task's command activity, by its task token or by its ids, with a retryable
 * `WorkerRestarted` (or `type`) carrying the command's `progress` when known, so its retry
 * re-attaches now. False when the server has no such attempt: it
 * ended (timed out, failed by another worker), or its run closed.
 */
async function failAttempt(
  client: Client,
  attempt: Uint8Array | { workflowId: string; runId: string; activityId: string },
  message: string,
  type: string = AttemptFailureType.workerRestarted,
  progress?: CommandProgress,
): Promise<boolean> {
  try {
    const failure = ApplicationFailure.retryable(
      message,
      type,
      ...(progress === undefined ? [] : [progress]),
    );
    // Two overloads of one call: by task token, or by the ids.
    await (attempt instanceof Uint8Array
      ? client.activity.fail(attempt, failure)
      : client.activity.fail(attempt, failure));
    return true;
  } catch (err) {
    if (err instanceof ActivityNotFoundError) return false;
    throw err;
  }
}
