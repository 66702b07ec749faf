import type { Client } from '@temporalio/client';
import type { AttachedTasks } from '../command-host/attached-tasks.js';
import { CLOSED_RUN_QUERY_BATCH } from '../shared/limits.js';

/** A run id as the server makes them (a UUID); anything else is never put into a query. */
export const RUN_ID = /^[0-9a-f-]{1,64}$/i;

/** `RunId IN (...)` of run ids that passed RUN_ID. */
export function runIdIn(runIds: readonly string[]): string {
  return `RunId IN (${runIds.map((id) => `'${id}'`).join(', ')})`;
}

/**
 * Finds the attempts this worker runs whose workflow run has closed (terminated, reset away, timed
 * out) and tells each (`runClosed`): one visibility query per CLOSED_RUN_QUERY_BATCH attempts, so what
 * it costs the server grows with the check's cadence, not with the number of tasks or their age.
 * It stands in for the "not found" a heartbeat's response would bring, which with heartbeats a
 * minute apart comes too late for a terminated task's processes. Resolves to the runs found closed.
 */
export async function checkClosedRuns(client: Client, attached: AttachedTasks): Promise<string[]> {
  const byRun = new Map<string, () => void>();
  for (const attempt of attached.values()) {
    if (RUN_ID.test(attempt.runId)) byRun.set(attempt.runId, () => attempt.runClosed());
  }
  const runIds = [...byRun.keys()];
  const closed: string[] = [];
  for (let start = 0; start < runIds.length; start += CLOSED_RUN_QUERY_BATCH) {
    const batch = runIds.slice(start, start + CLOSED_RUN_QUERY_BATCH);
    const query = `${runIdIn(batch)} AND ExecutionStatus != 'Running'`;
    for await (const execution of client.workflow.list({ query, pageSize: batch.length })) {
      closed.push(execution.runId);
      byRun.get(execution.runId)?.();
    }
  }
  return closed;
}
