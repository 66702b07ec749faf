import {
  ActivityNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  WorkflowNotFoundError,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { Runtime } from '@temporalio/worker';
import type { ReportedEnd, ReportedEnds } from '../command-host/reported-ends.js';
import { ActivityName } from '../shared/activity-names.js';
import { CLOSED_RUN_QUERY_BATCH, END_REPORT_GRACE_MS } from '../shared/limits.js';
import { statusSearchAttribute } from '../shared/search-attributes.js';
import { TaskStatus } from '../shared/task.js';
import { RUN_ID, runIdIn } from './closed-runs.js';

const { PendingActivityState } = proto.temporal.api.enums.v1;

/**
 * Sends again the ends this host's attempts returned that never reached the server (see
 * ReportedEnds). One visibility query per CLOSED_RUN_QUERY_BATCH ends names the runs still
 * `running` well after their attempt returned; only those are described, and an end is sent again
 * only when the server still has that very attempt started. A run that has its end costs the
 * query's share and nothing more. Resolves to the task ids whose end was sent again; an end the
 * server did not answer about stays for the next check.
 */
export async function resendLostEnds(
  client: Client,
  ends: ReportedEnds,
  heartbeatTimeoutMs: number,
): Promise<string[]> {
  const due = ends.due(Date.now(), END_REPORT_GRACE_MS, heartbeatTimeoutMs);
  const resent: string[] = [];
  for (let start = 0; start < due.length; start += CLOSED_RUN_QUERY_BATCH) {
    const batch = due.slice(start, start + CLOSED_RUN_QUERY_BATCH).filter((end) => RUN_ID.test(end.runId));
    const query =
      `${runIdIn(batch.map((end) => end.runId))} AND ExecutionStatus = 'Running' ` +
      `AND ${statusSearchAttribute.name} = '${TaskStatus.running}'`;
    const stillRunning = new Set<string>();
    for await (const execution of client.workflow.list({ query, pageSize: batch.length }))
      stillRunning.add(execution.runId);
    for (const end of batch) {
      const answer = stillRunning.has(end.runId) ? await resendIfLost(client, end) : 'held';
      if (answer === 'resent') resent.push(end.taskId);
      // An unanswered describe or resend is tried again at the next check.
      if (answer !== 'unanswered') ends.confirm(end.runId);
    }
  }
  return resent;
}

/**
 * Sends `end` again when the server still has its attempt started: `resent`; `held` when the
 * server has it (or no longer wants it), `unanswered` when the server did not say.
 */
async function resendIfLost(client: Client, end: ReportedEnd): Promise<'resent' | 'held' | 'unanswered'> {
  let description: WorkflowExecutionDescription;
  try {
    description = await client.workflow.getHandle(end.taskId, end.runId).describe();
  } catch (err) {
    return err instanceof WorkflowNotFoundError ? 'held' : 'unanswered';
  }
  const pending = description.raw.pendingActivities?.find(
    (activity) =>
      activity.activityType?.name === ActivityName.runCommand &&
      activity.activityId === end.activityId &&
      activity.attempt === end.attempt,
  );
  // A kill's cancellation leaves the attempt started (cancel requested) until it reports its end.
  if (
    pending?.state !== PendingActivityState.PENDING_ACTIVITY_STATE_STARTED &&
    pending?.state !== PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
  )
    return 'held';
  try {
    await client.activity.complete(end.taskToken, end.outcome);
  } catch (err) {
    // It arrived meanwhile, or the attempt ended otherwise (timed out, its run closed).
    return err instanceof ActivityNotFoundError ? 'held' : 'unanswered';
  }
  Runtime.instance().logger.warn(
    `the end of task ${end.taskId} did not reach the server when its attempt returned it; sent again`,
    { taskId: end.taskId },
  );
  return 'resent';
}
