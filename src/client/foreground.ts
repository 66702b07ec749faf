/**
 * A foreground run as its caller waits for it: its result (an abort stops the run), and the move to
 * the background of a run still going after `autoBackgroundAfterMs`, answered with its output so far.
 */
import {
  type Client,
  type WorkflowExecutionDescription,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { RunAbortedError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import { runFailure } from '../shared/run-failure.js';
import type { BashTaskResult, NoticeTarget, TaskId } from '../shared/task.js';
import { type bashTask, moveToBackgroundUpdate } from '../workflows/bash-task.js';
import type { OutputRead } from './output-reader-client.js';
import { serverNow } from './server-clock.js';
import type { TaskReads } from './task-reads.js';
import { asClientError } from './temporal-unreachable.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';
import { waitOutWorkflowTaskStartedBy } from './workflow-task-in-flight.js';

/** How long a foreground call waits for the workflow to take (or refuse) its move to the background. */
const MOVE_TIMEOUT_MS = CONNECT_TIMEOUT_MS;

/** Time between a move's expiry and the end of the caller's wait, for the answer to come back. */
const MOVE_ANSWER_MARGIN_MS = 2_000;

/** What a foreground call gets: the run's result, or the output so far of a run that moved to the background. */
export type ForegroundOutcome =
  | { kind: 'ended'; result: BashTaskResult }
  | { kind: 'moved'; read: OutputRead; afterMs: number };

/** What the foreground wait needs of its client. */
export interface ForegroundContext {
  client: Client;
  reads: TaskReads;
  /** The task, described behind the ownership fence. */
  describeOwned(taskId: string, owner: string | undefined): Promise<WorkflowExecutionDescription>;
  /** Where a background task of `owner` sends its completion notice. */
  noticeFor(owner: string | undefined): { notice?: NoticeTarget };
}

/**
 * Waits for a run's result. Aborting `signal` stops the run (its process group is killed);
 * aborting `stopWaiting` only stops this wait (it then rejects with the abort's reason).
 */
export async function runResult(
  client: Client,
  taskId: TaskId,
  signal?: AbortSignal,
  stopWaiting?: AbortSignal,
): Promise<BashTaskResult> {
  const handle = client.workflow.getHandle<typeof bashTask>(taskId);
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  stopWaiting?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted || stopWaiting?.aborted) abort.abort();
    const result = await client.withAbortSignal(abort.signal, () => handle.result());
    return refuseUnencrypted(result, `task ${taskId}`, 'result');
  } catch (err) {
    if (abort.signal.aborted) {
      if (stopWaiting?.aborted && !signal?.aborted) throw stopWaiting.reason;
      await handle.cancel();
      throw new RunAbortedError(taskId);
    }
    if (err instanceof WorkflowFailedError) throw runFailure(taskId, err);
    throw asClientError(client, err);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stopWaiting?.removeEventListener('abort', onAbort);
  }
}

/**
 * Waits for a foreground run's result; with `autoBackgroundAfterMs`, a run still going after that
 * long moves to the background (owned by `owner`, with its completion notice) and answers with the
 * output so far, claimed as a `bash_output` read would, so the next read goes on after it. A run
 * that ends as it is moved answers with its result.
 */
export async function foregroundResult(
  context: ForegroundContext,
  taskId: TaskId,
  options: {
    signal?: AbortSignal;
    autoBackgroundAfterMs?: number;
    owner?: string;
    /** Makes the move, or not (false): the owner's background quota. */
    admitMove?: (move: () => Promise<boolean>) => Promise<boolean>;
  } = {},
): Promise<ForegroundOutcome> {
  const { signal, autoBackgroundAfterMs, owner, admitMove = (move) => move() } = options;
  if (autoBackgroundAfterMs === undefined)
    return { kind: 'ended', result: await runResult(context.client, taskId, signal) };
  const stopWaiting = new AbortController();
  const ended = runResult(context.client, taskId, signal, stopWaiting.signal).then((result) => ({
    kind: 'ended' as const,
    result,
  }));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const due = new Promise<'due'>((resolve) => {
    timer = setTimeout(() => resolve('due'), autoBackgroundAfterMs);
  });
  try {
    const first = await Promise.race([ended, due]);
    if (first !== 'due') return first;
  } finally {
    clearTimeout(timer);
  }
  const before = await context.describeOwned(taskId, owner);
  if (!(await admitMove(() => moveToBackground(context, taskId, owner)))) return ended;
  stopWaiting.abort(new Error('moved to the background'));
  // Settled before the read: it can no longer cancel the run, which is not this call's any more.
  await ended.catch(() => undefined);
  // The output so far, read on the command's host (the attempt that re-attaches needs no heartbeat for it).
  const read = await context.reads.read(before, {});
  return { kind: 'moved', read, afterMs: autoBackgroundAfterMs };
}

/**
 * Moves a foreground run to the background: no timeout any more, and a completion notice in the
 * owner's session. False when the run refused (it had ended, or its timeout had fired) or did not
 * answer in time; the caller then waits for its result as before.
 */
export async function moveToBackground(
  context: ForegroundContext,
  taskId: TaskId,
  owner: string | undefined,
): Promise<boolean> {
  const { client } = context;
  const handle = client.workflow.getHandle<typeof bashTask>(taskId);
  // The workflow refuses a move it takes after this, well before this call stops waiting; a
  // workflow task that took it in time but answered late is waited out, and its move found in the
  // memo the move writes.
  const expiresAtMs = serverNow(client) + MOVE_TIMEOUT_MS - MOVE_ANSWER_MARGIN_MS;
  const gaveUp = AbortSignal.timeout(MOVE_TIMEOUT_MS);
  try {
    await client.withAbortSignal(gaveUp, () =>
      handle.executeUpdate(moveToBackgroundUpdate, {
        args: [{ taskId, ...context.noticeFor(owner), expiresAtMs }],
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) return false;
    if (gaveUp.aborted) {
      // A workflow task that started before the expiry takes the move whenever it completes: once
      // none is in flight, the memo says whether the move applied.
      const description = await waitOutWorkflowTaskStartedBy(client, taskId, expiresAtMs).catch(
        () => undefined,
      );
      return description?.memo?.background === true;
    }
    throw asClientError(client, err);
  }
}
