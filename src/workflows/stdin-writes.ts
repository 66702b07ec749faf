import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineUpdate,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import {
  STDIN_HISTORY_MAX_BYTES,
  STDIN_HISTORY_MAX_EVENTS,
  STDIN_HOST_WAIT_MS,
  STDIN_WRITE_MS,
} from '../shared/limits.js';
import {
  noTerminal,
  STDIN_WRITE_EXPIRED,
  type StdinWriteRequest,
  type StdinWriteResult,
} from '../shared/stdin.js';
import type { CommandHost, TaskId } from '../shared/task.js';
import { controlTaskQueue } from '../shared/task-queues.js';
import { refuseArgumentForOther, refuseArgumentOfOtherUpdate } from './addressed-payloads.js';
import { refuseUnencryptedArgument } from './unencrypted-payloads.js';

/**
 * Writes to the stdin of a task started with `keepStdinOpen` (`bash_input`), through a worker on
 * the command's host; answers what the host did. Refused (nothing written) for a task without an
 * open stdin, one whose command ended, and a request that arrives past its expiry.
 */
export const writeStdinUpdate = defineUpdate<StdinWriteResult, [StdinWriteRequest]>('writeStdin');

/** What a write needs to know of the run: its host once chosen, and whether its command ended. */
export interface StdinTarget {
  taskId: TaskId;
  keepStdinOpen: boolean;
  /** The task runs on a terminal: it takes resizes. */
  terminal: boolean;
  host(): CommandHost | undefined;
  ended(): boolean;
}

/** The text a write is refused with when the task's stdin was never open. */
export const stdinNotOpen = (taskId: TaskId) =>
  `task ${taskId} was not started with keep_stdin_open; its stdin is /dev/null`;

/** How far past the host wait an expiry may lie before the caller's clock counts as ahead of the server's. */
const CLOCK_SLACK_MS = 1_000;

/** The least time before its expiry a write must still have when the workflow takes it. */
const STDIN_MIN_LEFT_MS = 1_000;

/**
 * Takes writes one at a time, in the order the workflow accepted them, so texts never interleave.
 * A write waits for the host only until its expiry: one no worker there took by then was not written.
 */
export function handleStdinWrites(target: StdinTarget): void {
  // Made with the first write: each promise a run makes costs its worker a stack trace (the SDK's
  // promise hook), and most runs take no write.
  let previous: Promise<unknown> | undefined;
  setHandler(
    writeStdinUpdate,
    (request) => {
      // A kill must not cut a write short: it ends quickly, and answers `ended` if it had to wait.
      const acceptedAt = Date.now();
      const turn = (previous ?? Promise.resolve()).then(() =>
        CancellationScope.nonCancellable(() => write(target, request, acceptedAt)),
      );
      previous = turn.catch(() => undefined);
      return turn;
    },
    {
      validator: (request) => {
        refuseUnencryptedArgument(writeStdinUpdate.name, request);
        refuseArgumentForOther(writeStdinUpdate.name, 'taskId', target.taskId, request.taskId, 'optional');
        refuseArgumentOfOtherUpdate(writeStdinUpdate.name, 'writeId', request.writeId, 'optional');
        if (request.size && !target.terminal) throw new Error(noTerminal(target.taskId));
        if (!target.keepStdinOpen) throw new Error(stdinNotOpen(target.taskId));
        if (target.ended()) throw new Error(`task ${target.taskId} has ended; nothing was written`);
        // Each write is in the history (about 8 events and its text): keep the run well inside
        // Temporal's history limits (51,200 events, 50 MB).
        const { historyLength, historySize } = workflowInfo();
        if (historyLength > STDIN_HISTORY_MAX_EVENTS || historySize > STDIN_HISTORY_MAX_BYTES)
          throw new Error(
            `task ${target.taskId} has taken all the input its history may hold; nothing was written`,
          );
        // Past its expiry, or expiring later than a caller could wait: the caller's clock is off.
        // It learns the server's from this refusal and sends the write again.
        // Too little time left is refused the same way: the write would reach its host after the
        // caller stopped waiting for it.
        const left = request.expiresAtMs - Date.now();
        if (left < STDIN_MIN_LEFT_MS || left > STDIN_HOST_WAIT_MS + CLOCK_SLACK_MS)
          throw new Error(`${STDIN_WRITE_EXPIRED}${Date.now()}`);
      },
    },
  );
}

async function write(
  target: StdinTarget,
  request: StdinWriteRequest,
  acceptedAt: number,
): Promise<StdinWriteResult> {
  const hostChosen = await condition(
    () => target.host() !== undefined || target.ended(),
    Math.max(1, request.expiresAtMs - Date.now()),
  );
  const host = target.host();
  if (target.ended()) return { kind: 'ended' };
  if (!hostChosen || host === undefined) return { kind: 'no-host' };
  const left = request.expiresAtMs - Date.now();
  // The host was there, but earlier writes held the stdin until this one's time ran out.
  if (left <= 0) return { kind: 'expired', waitedMs: Date.now() - acceptedAt };
  const { writeStdin } = proxyActivities<CommandActivities>({
    // The host's control queue, whose slots running commands never take.
    taskQueue: controlTaskQueue(host.hostQueue),
    // Taken by a worker there before the expiry, or never: a caller that stopped waiting never
    // sees the text land later. Never retried: a second attempt could write it twice.
    scheduleToStartTimeout: left,
    startToCloseTimeout: STDIN_WRITE_MS,
    retry: { maximumAttempts: 1 },
  });
  try {
    return await writeStdin({
      taskId: target.taskId,
      text: request.text,
      close: request.close,
      ...(request.keys ? { keys: request.keys } : {}),
      ...(request.size ? { size: request.size } : {}),
    });
  } catch (err) {
    if (timedOut(err, TimeoutType.SCHEDULE_TO_START)) return { kind: 'no-host' };
    // It may have written part of the text before it failed or its worker was lost.
    throw ApplicationFailure.create({
      message: `the write to task ${target.taskId} failed: ${rootCause(err)}; it may have been written`,
      nonRetryable: true,
    });
  }
}

function timedOut(err: unknown, type: TimeoutType): boolean {
  return (
    err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === type
  );
}

/** The innermost failure's message, on one line. */
function rootCause(err: unknown): string {
  let cause = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return message.split('\n', 1)[0] ?? message;
}
