/**
 * The approval request's activity (shared/approval.ts has the whole path), run by every worker of
 * the command queue: it starts an approved run as the client that asked would have, counted first
 * against the session's background quota when the run starts in the background. An activity, not
 * workflow code, because the count is a visibility query; and the count and the start take one turn
 * per session in this worker (`BackgroundQuota`), so approvals decided at the same moment are
 * counted one after the other, each seeing the runs the others started.
 */

import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ApprovalActivityName } from '../shared/activity-names.js';
import type { ApprovalActivities, ApprovedRunRequest, ApprovedRunStart } from '../shared/approval.js';
import { BackgroundQuotaError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS, DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION } from '../shared/limits.js';
import type { TaskId } from '../shared/task.js';
import { BackgroundQuota } from './background-quota.js';
import { BashTasks } from './bash-tasks.js';
import { startPrepared } from './task-start.js';
import { asClientError } from './temporal-unreachable.js';

export function createApprovalActivities(client: Client, taskQueue: string) {
  const tasks = new BashTasks({ client, taskQueue });
  // One for the worker, so every request's start takes its session's turn; each request names its
  // own limit (its agent host's), so this default is never the one counted against.
  const quota = new BackgroundQuota(tasks, DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION);
  const start = async (request: ApprovedRunRequest): Promise<TaskId> => {
    await startPrepared({ client, taskQueue, eagerStart: false }, request.start);
    return request.start.input.taskId;
  };
  const activities = {
    async startApprovedRun(request: ApprovedRunRequest): Promise<ApprovedRunStart> {
      const limit = request.maxBackgroundTasks;
      if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
        throw ApplicationFailure.nonRetryable(`maxBackgroundTasks must be a positive integer, got ${limit}`);
      // An earlier attempt started it and its answer was lost: the run it started is the one approved.
      if (await taskExists(client, request.start.input.taskId)) return { kind: 'started' };
      if (limit === undefined || !request.start.input.background) {
        await start(request);
        return { kind: 'started' };
      }
      try {
        await quota.start(request.sessionId, () => start(request), limit);
        return { kind: 'started' };
      } catch (err) {
        if (!(err instanceof BackgroundQuotaError)) throw err;
        return { kind: 'overQuota', running: err.running, limit: err.limit };
      }
    },
  } satisfies ApprovalActivities;
  return activities;
}

export type ApprovalActivityFunctions = ReturnType<typeof createApprovalActivities>;

/** Whether a task's workflow exists (in any state). */
async function taskExists(client: Client, taskId: string): Promise<boolean> {
  try {
    await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      client.workflow.getHandle(taskId).describe(),
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw asClientError(client, err);
  }
}

// Their recorded names (shared/activity-names.ts), checked both ways as the command activities' are.
ApprovalActivityName satisfies { readonly [Name in keyof ApprovalActivityFunctions]: Name };
({}) as ApprovalActivityFunctions satisfies { [Name in keyof typeof ApprovalActivityName]: unknown };
