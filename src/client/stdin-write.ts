import { randomUUID } from 'node:crypto';
import {
  type Client,
  isGrpcDeadlineError,
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowUpdateHandle,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { StdinWriteError } from '../errors.js';
import { STDIN_HOST_WAIT_MS, STDIN_WRITE_MS } from '../shared/limits.js';
import { STDIN_WRITE_EXPIRED, type StdinWrite, type StdinWriteResult } from '../shared/stdin.js';
import { writeStdinUpdate } from '../workflows/stdin-writes.js';
import { learnServerTime, serverNow } from './server-clock.js';

/** Time kept past the host's own bounds for the answer to travel back. */
const ANSWER_MARGIN_MS = 2_000;

/**
 * Sends a write to a task's stdin through its workflow and returns what the host did. The request
 * expires on the server's clock: once the workflow has not taken it by then, it never will, so
 * "nothing was written" is certain. Refusals throw `StdinWriteError` with the line the model sees.
 */
export async function writeTaskStdin(
  client: Client,
  taskId: string,
  write: StdinWrite,
): Promise<StdinWriteResult> {
  const handle = client.workflow.getHandle(taskId);
  for (let attempt = 0; ; attempt++) {
    const acceptBy = Date.now() + STDIN_HOST_WAIT_MS;
    const answerBy = acceptBy + STDIN_WRITE_MS + ANSWER_MARGIN_MS;
    const request = { ...write, expiresAtMs: serverNow(client) + STDIN_HOST_WAIT_MS };
    let update: WorkflowUpdateHandle<StdinWriteResult>;
    try {
      update = await client.withDeadline(acceptBy + ANSWER_MARGIN_MS, () =>
        handle.startUpdate(writeStdinUpdate, {
          args: [request],
          updateId: randomUUID(),
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        }),
      );
    } catch (err) {
      const serverTime = expiredAt(err);
      if (serverTime !== undefined && attempt === 0) {
        learnServerTime(client, serverTime);
        continue;
      }
      if (err instanceof WorkflowUpdateFailedError) throw new StdinWriteError(refusal(err));
      if (err instanceof WorkflowNotFoundError)
        throw new StdinWriteError(`task ${taskId} has ended; nothing was written`);
      if (isDeadline(err))
        throw new StdinWriteError(
          `task ${taskId} did not take the write within ${STDIN_HOST_WAIT_MS}ms (no worker runs its workflow); nothing was written`,
        );
      throw err;
    }
    try {
      return await client.withDeadline(answerBy, () => update.result());
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) throw new StdinWriteError(refusal(err));
      if (isDeadline(err))
        throw new StdinWriteError(
          `the write to task ${taskId} got no answer within ${STDIN_HOST_WAIT_MS + STDIN_WRITE_MS + ANSWER_MARGIN_MS}ms; it may have been written`,
        );
      throw err;
    }
  }
}

/** The refusal's own line (the workflow's validator or the write's failure). */
function refusal(err: WorkflowUpdateFailedError): string {
  const message = err.cause instanceof Error ? err.cause.message : err.message;
  return message.split('\n', 1)[0] ?? message;
}

/** The workflow time an expired write's refusal reports, or undefined for any other error. */
function expiredAt(err: unknown): number | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const message = err.cause instanceof Error ? err.cause.message : '';
  if (!message.startsWith(STDIN_WRITE_EXPIRED)) return undefined;
  const time = Number(message.slice(STDIN_WRITE_EXPIRED.length));
  return Number.isFinite(time) ? time : undefined;
}

/** The call's own deadline passed: the server answered nothing in time (it was reachable a moment ago). */
function isDeadline(err: unknown): boolean {
  return isGrpcDeadlineError(err instanceof ServiceError ? err.cause : err);
}
