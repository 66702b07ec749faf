import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  type WorkflowExecutionDescription,
  WorkflowFailedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { ActivityName } from '../shared/activity-names.js';
import { KILL_GRACE_MS } from '../shared/limits.js';
import type { BashTaskResult, TaskId } from '../shared/task.js';
import { sessionKillSignal } from '../workflows/bash-task.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';

/** How long `kill` waits for the killed run to report its end. */
const KILL_CONFIRM_MS = KILL_GRACE_MS + 10_000;

/** How often `kill` checks whether its kill waits for the task's host to come back. */
const KILL_CHECK_INTERVAL_MS = 500;

/**
 * A command or stop activity no worker has taken for this long has no worker on its host answering:
 * a live worker takes one within milliseconds. (Heartbeats, minutes apart, say nothing this soon.)
 */
const SILENT_WORKER_MS = 2_000;

/**
 * A workflow task a worker took and has not completed for this long has a worker that does not
 * answer (cut off, or dead before its timeout): one completes in milliseconds, a busy one in a
 * second or two.
 */
const STALLED_WORKFLOW_TASK_MS = 5_000;

export interface KillOptions {
  /**
   * The kill is the owning session's own (`bash_kill`), and its answer reaches that session, which
   * takes the task's notices: the task is told so first (`sessionKillSignal`), and sends it no
   * completion notice. A kill whose answer is `pending` takes that back, so the end still comes as
   * a notice once it takes effect. @default false: the task's end is noticed as any other
   */
  answersSession?: boolean;
}

/**
 * Kills a running task (described behind the fence) and waits for its end; a finished task is left
 * as it is. While no worker on the task's host answers, the kill is recorded and takes effect once
 * one is back: that answers `pending` at once.
 */
export async function killTask(
  client: Client,
  description: WorkflowExecutionDescription,
  options: KillOptions = {},
): Promise<'killed' | 'already-finished' | 'pending'> {
  if (description.status.name !== 'RUNNING') return 'already-finished';
  const taskId = description.workflowId;
  const handle = client.workflow.getHandle(taskId);
  // Only a background task has a notice to spare (one moved there says so in its memo).
  const answers = options.answersSession === true && description.memo?.background !== false;
  const answered = (answered: boolean) =>
    handle.signal(sessionKillSignal, { taskId: taskId as TaskId, answered });
  try {
    if (answers) await answered(true);
    await handle.cancel();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'already-finished';
    throw err;
  }
  const outcome = await killEnd(client, taskId);
  // Best effort: a task that ended meanwhile has noticed its end already.
  if (outcome === 'pending' && answers) await answered(false).catch(() => undefined);
  return outcome;
}

/** Waits for the end of a task whose kill was asked for: its outcome, or `pending` while it waits for its host. */
async function killEnd(client: Client, taskId: string): Promise<'killed' | 'already-finished' | 'pending'> {
  const handle = client.workflow.getHandle(taskId);
  const deadline = Date.now() + KILL_CONFIRM_MS;
  const stopWaiting = new AbortController();
  const ended = client
    .withAbortSignal(stopWaiting.signal, () => handle.result() as Promise<BashTaskResult>)
    .then(
      (result): 'killed' | 'already-finished' =>
        endedBy(refuseUnencrypted(result, `task ${taskId}`, 'result')),
      (err: unknown) => {
        // The kill is requested either way; a run that ends without an outcome is still ended.
        if (err instanceof WorkflowFailedError || stopWaiting.signal.aborted) return 'killed' as const;
        throw err;
      },
    );
  try {
    while (Date.now() < deadline) {
      const done = await Promise.race([ended, sleep(KILL_CHECK_INTERVAL_MS).then(() => false as const)]);
      if (done) return done;
      if (await killWaitsForHost(client, taskId)) return 'pending';
    }
    // Unconfirmed well past the kill's grace: something on the way does not answer (a stop taken
    // by a worker cut off since). The kill stands and takes effect when it does; not "killed" yet.
    return 'pending';
  } finally {
    stopWaiting.abort();
  }
}

/**
 * Whose end a run's result is: the kill's, or the command's own, when it had ended before the
 * kill reached it (it was sent while the server or the host's worker was down, say). A run recorded
 * before results said so counts as killed when a signal ended its command.
 */
export function endedBy(result: BashTaskResult): 'killed' | 'already-finished' {
  return (result.killed ?? result.signal !== null) ? 'killed' : 'already-finished';
}

/**
 * The kill waits for a worker to come back: the stop activity the kill sends (or the command's
 * next attempt) has waited for a worker on the host longer than a live one takes, or the workflow
 * task that carries the kill has waited for any worker of the queue. These are the probes: a
 * worker that is there takes them at once, however long ago the command heartbeated.
 */
async function killWaitsForHost(client: Client, taskId: string): Promise<boolean> {
  const description = await client.workflow
    .getHandle(taskId)
    .describe()
    .catch(() => undefined);
  const { PendingActivityState, PendingWorkflowTaskState } = proto.temporal.api.enums.v1;
  const silentSince = (
    time: { seconds?: { toString(): string } | null } | null | undefined,
    forMs = SILENT_WORKER_MS,
  ) => Date.now() - Number(time?.seconds?.toString() ?? Date.now() / 1000) * 1000 > forMs;
  // No worker takes the workflow task that carries the kill (every worker of the queue is down),
  // or the one that took it does not answer (its long poll got it just as its host was cut off:
  // the task stays started until its timeout, while a live worker completes one in milliseconds).
  const workflowTask = description?.raw.pendingWorkflowTask;
  if (
    (workflowTask?.state === PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED &&
      silentSince(workflowTask.scheduledTime)) ||
    (workflowTask?.state === PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED &&
      silentSince(workflowTask.startedTime, STALLED_WORKFLOW_TASK_MS))
  ) {
    return true;
  }
  return (
    description?.raw.pendingActivities?.some((activity) => {
      const name = activity.activityType?.name;
      if (name !== ActivityName.runCommand && name !== ActivityName.stopCommand) return false;
      // Due this long ago and no worker has taken it (a retry's backoff is not yet due).
      return (
        activity.state === PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED &&
        silentSince(activity.scheduledTime)
      );
    }) ?? false
  );
}
