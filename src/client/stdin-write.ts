import { randomUUID } from 'node:crypto';
import {
  type Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowUpdateHandle,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { firstLine } from '../shared/checks.js';
import { StdinWriteError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS, STDIN_HOST_WAIT_MS, STDIN_WRITE_MS } from '../shared/limits.js';
import {
  STDIN_WRITE_EXPIRED,
  type StdinWrite,
  type StdinWriteRequest,
  type StdinWriteResult,
} from '../shared/stdin.js';
import { writeStdinUpdate } from '../workflows/stdin-writes.js';
import { learnServerTime, refusedAtServerTime, serverNow } from './server-clock.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';
import { waitOutWorkflowTaskStartedBy } from './workflow-task-in-flight.js';

/** Time kept past the host's own bounds for the answer to travel back. */
const ANSWER_MARGIN_MS = 2_000;

/** The longest a write's answer takes once the workflow took it: the host's wait, the write, the way back. */
const ANSWER_WAIT_MS = STDIN_HOST_WAIT_MS + STDIN_WRITE_MS + ANSWER_MARGIN_MS;

/**
 * Sends a write to a task's stdin through its workflow and returns what the host did. The request
 * expires on the server's clock: once the workflow has not taken it by then, it never will (a
 * workflow task that took it before is waited out), so "nothing was written" is certain. A refusal
 * for a clock that is off teaches this host the server's time, and the write is sent once more.
 * Other refusals throw `StdinWriteError` with the line the model sees.
 */
export async function writeTaskStdin(
  client: Client,
  taskId: string,
  write: StdinWrite,
): Promise<StdinWriteResult> {
  const handle = client.workflow.getHandle(taskId);
  for (let attempt = 0; ; attempt++) {
    const updateId = randomUUID();
    // It names its task and its update, so a copy of it applies nowhere else and never twice.
    const request: StdinWriteRequest = {
      ...write,
      taskId,
      writeId: updateId,
      expiresAtMs: serverNow(client) + STDIN_HOST_WAIT_MS,
    };
    const notTaken = AbortSignal.timeout(STDIN_HOST_WAIT_MS + ANSWER_MARGIN_MS);
    let update: WorkflowUpdateHandle<StdinWriteResult>;
    try {
      update = await client.withAbortSignal(notTaken, () =>
        handle.startUpdate(writeStdinUpdate, {
          args: [request],
          updateId,
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        }),
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        throw new StdinWriteError(`task ${taskId} has ended; nothing was written`);
      if (!notTaken.aborted) throw err;
      // A workflow task that started before the expiry takes the write whenever it completes.
      const taken = await waitOutWorkflowTaskStartedBy(client, taskId, request.expiresAtMs)
        .then(() => updateAccepted(client, taskId, updateId))
        .catch(() => {
          throw new StdinWriteError(
            `the write to task ${taskId} got no answer, and whether its workflow took it could not be learned; it may have been written`,
          );
        });
      if (!taken)
        throw new StdinWriteError(
          `task ${taskId} did not take the write within ${STDIN_HOST_WAIT_MS}ms (no worker runs its workflow); nothing was written`,
        );
      update = handle.getUpdateHandle<StdinWriteResult>(updateId);
    }
    const noAnswer = AbortSignal.timeout(ANSWER_WAIT_MS);
    let result: StdinWriteResult;
    try {
      result = await client.withAbortSignal(noAnswer, () => update.result());
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        // A refused update wrote nothing, so sending it again is safe.
        const serverTime = refusedAtServerTime(err, STDIN_WRITE_EXPIRED);
        if (serverTime !== undefined && attempt === 0) {
          learnServerTime(client, serverTime);
          continue;
        }
        throw new StdinWriteError(serverTime !== undefined ? clockRefusal(taskId) : refusal(err));
      }
      if (noAnswer.aborted)
        throw new StdinWriteError(
          `the write to task ${taskId} got no answer within ${ANSWER_WAIT_MS}ms; it may have been written`,
        );
      // The workflow took the write, then its answer was lost (the run terminated from outside, the
      // server unreachable): the host may have written it.
      throw new StdinWriteError(
        `the write to task ${taskId} got no answer (${firstLine(err)}); it may have been written`,
      );
    }
    return refuseUnencrypted(result, `task ${taskId}`, 'answer to the write');
  }
}

const clockRefusal = (taskId: string) =>
  `task ${taskId} refused the write twice for this host's clock; nothing was written`;

/** The refusal's own line (the workflow's validator, or the write's failure). */
function refusal(err: WorkflowUpdateFailedError): string {
  return firstLine(err.cause instanceof Error ? err.cause : err);
}

/** Whether the task's workflow accepted the update: its history records each one it took. */
async function updateAccepted(client: Client, taskId: string, updateId: string): Promise<boolean> {
  const { events } = await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
    client.workflow.getHandle(taskId).fetchHistory(),
  );
  return (events ?? []).some(
    (event) =>
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId === updateId,
  );
}
