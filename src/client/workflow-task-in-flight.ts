/**
 * A workflow task still in flight when a caller stops waiting for an update. A validator judges an
 * update by workflow time, which is when its workflow task started; so an update with an expiry,
 * taken by a task that started before the expiry, applies when that task completes, however late
 * (its worker paused, or cut off from the server). A caller that gave up must wait for such a task
 * to complete, fail or time out before it may say the update did not apply.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';

const STARTED = proto.temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED;

/** How often the workflow is described while the task is in flight. */
const IN_FLIGHT_POLL_MS = 200;

/** Time past the workflow task's timeout for the server to record that it timed out. */
const TIMEOUT_MARGIN_MS = 2_000;

/** Temporal's default workflow task timeout, for a run that does not say its own. */
const DEFAULT_WORKFLOW_TASK_TIMEOUT_MS = 10_000;

/**
 * Resolves once no workflow task of `workflowId`'s latest run that started at or before
 * `startedByMs` (epoch ms on the server's clock) is in flight (at once when none is, else when it
 * completed, failed or timed out), with the run's description at that moment. Throws when one is
 * still in flight past its run's workflow task timeout, which the server enforces (so it is not
 * reachable, or not keeping time), or when a describe gets no answer within CONNECT_TIMEOUT_MS.
 */
export async function waitOutWorkflowTaskStartedBy(
  client: Client,
  workflowId: string,
  startedByMs: number,
): Promise<WorkflowExecutionDescription> {
  const handle = client.workflow.getHandle(workflowId);
  let giveUpAt: number | undefined;
  for (;;) {
    const description = await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () => handle.describe());
    const { raw } = description;
    const pending = raw.pendingWorkflowTask;
    const startedMs = pending?.state === STARTED ? optionalTsToMs(pending.startedTime) : undefined;
    if (startedMs === undefined || startedMs > startedByMs) return description;
    const timeoutMs =
      optionalTsToMs(raw.executionConfig?.defaultWorkflowTaskTimeout) || DEFAULT_WORKFLOW_TASK_TIMEOUT_MS;
    giveUpAt ??= Date.now() + timeoutMs + TIMEOUT_MARGIN_MS;
    if (Date.now() >= giveUpAt) {
      throw new Error(
        `a workflow task of ${workflowId} is still in flight past its ${timeoutMs}ms timeout; whether it applied is not known yet`,
      );
    }
    await sleep(IN_FLIGHT_POLL_MS);
  }
}
