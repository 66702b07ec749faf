import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  defineUpdate,
  getExternalWorkflowHandle,
  isCancellation,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  TimeoutFailure,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import { HOST_READ_START_MS, NOTICE_TAIL_CHARS, READER_PROBE_INTERVAL_MS } from '../shared/limits.js';
import { noticeText } from '../shared/notice.js';
import { READER_POSITION_IN_HISTORY_PATCH } from '../shared/patches.js';
import {
  CLAIM_EXPIRED,
  type ClaimRequest,
  type ClaimResult,
  type HostRead,
  type HostReadClaim,
  type HostReadResult,
  type OutputReaderInput,
  positionOn,
  RECENT_CLAIMS_KEPT,
  type ReaderMemo,
  type ReadPosition,
} from '../shared/read-position.js';
import { renderNoticeOutput } from '../shared/render-notice.js';
import { controlTaskQueue } from '../shared/task-queues.js';
import {
  ignoredSignalForOther,
  refuseArgumentForOther,
  refuseArgumentOfOtherUpdate,
} from './addressed-payloads.js';
import { abandonReadSignal, outputReaderStartedSignal, taskEndedSignal } from './reader-signals.js';
import { sendNotice } from './task-end.js';
import {
  ignoredUnencryptedSignal,
  refuseUnencryptedArgument,
  refuseUnencryptedInput,
} from './unencrypted-payloads.js';

export { taskEndedSignal } from './reader-signals.js';

/** Moves the read position up to the claim and returns where it stood: the claimer owns the bytes between. */
export const claimUpdate = defineUpdate<ClaimResult, [ClaimRequest]>('claim');

/**
 * Reads a running task's new output on its host (`readOutput` on the host's queue, waiting there up
 * to `waitMs`) and moves the read position past what it returns, unless the caller can no longer
 * get the answer. Reads and claims take turns, so two never return the same bytes.
 */
export const readUpdate = defineUpdate<HostReadResult, [HostReadClaim]>('read');

/** Time kept between a host read's answer and its caller's giving up, for the way back. */
const READ_ANSWER_MARGIN_MS = 500;

/** Time a read activity gets past its wait, to read and return. */
const READ_ACTIVITY_SLACK_MS = 10_000;

/**
 * Holds the `bash_output` read position of one task. Updates serialize claims, so two readers never
 * get the same bytes. A separate workflow from the task's run because it must accept claims after
 * the run closed, and continue as new when reads pile up (the run cannot: its command activity is
 * pending). The position lives in the history (each update's request and answer), where clients
 * with no worker to ask find it (`readerState`); the memo holds it as each run starts, and says
 * once when a read first showed the task's end (listings look for that).
 *
 * While the task runs the reader never ends (its memo would be the only copy of the position, and
 * retention deletes closed runs). It tells the task it exists, so the task signals it at the end
 * (handing it the completion notice, which the reader sends without what reads showed), and signals
 * the task again every READER_PROBE_INTERVAL_MS: a signal to a task that has closed fails, which is
 * how a reader learns of an end it was not told. Once the task ended, the reader ends after
 * `idleMs` without claims.
 */
export async function bashOutputReader(input: OutputReaderInput): Promise<ReadPosition> {
  refuseUnencryptedInput(input);
  // Runs recorded before it wrote the memo on every move and re-armed their timers on every claim.
  const atRest = patched(READER_POSITION_IN_HISTORY_PATCH);
  let memo: ReaderMemo = {
    position: input.position,
    recentClaims: input.recentClaims ?? [],
    ...(input.host !== undefined ? { host: input.host } : {}),
  };
  // A run continued as new keeps knowing that a read showed the task's end (its memo says so).
  if (workflowInfo().memo?.endShown === true) memo = { ...memo, endShown: true };
  let taskEnded = input.taskEnded;
  let claims = 0;
  // Workflow time of the last claim (or of the task's end, if later): the idle end counts from it.
  let quietSinceMs = Date.now();
  const counted = () => {
    claims++;
    quietSinceMs = Date.now();
  };

  /**
   * Moves the position up to `upTo` (bytes of `hostQueue`'s files, when the claim names a host) for
   * claim `claimId` (one of the ended task: `ended`); returns where it stood.
   */
  const advance = (claimId: string, upTo: ReadPosition, ended = false, hostQueue?: string): ReadPosition => {
    const before = positionOn(memo, hostQueue);
    const endAlreadyShown = memo.endShown === true;
    const host = hostQueue ?? memo.host;
    memo = {
      position: {
        stdout: Math.max(before.stdout, upTo.stdout),
        stderr: Math.max(before.stderr, upTo.stderr),
      },
      recentClaims: [...memo.recentClaims, { claimId, before }].slice(-RECENT_CLAIMS_KEPT),
      ...(ended || memo.endShown ? { endShown: true } : {}),
      ...(host !== undefined ? { host } : {}),
    };
    counted();
    if (!atRest || (memo.endShown === true && !endAlreadyShown)) upsertMemo({ ...memo });
    return before;
  };
  // Claims and host reads take turns: a read made from a position must not see it move meanwhile.
  // With no read in flight a claim applies at once, in its own activation's commands, exactly as
  // before reads went to the host (histories of that time replay the same).
  let turns: Promise<unknown> = Promise.resolve();
  let readsInFlight = 0;
  const inTurn = <T>(run: () => Promise<T> | T): Promise<T> => {
    readsInFlight++;
    const turn = turns.then(run).finally(() => {
      readsInFlight--;
    });
    turns = turn.catch(() => undefined);
    return turn;
  };
  // A task that reads have seen hands its notice over with its end. The notice takes its turn after
  // every read already in flight (what those return is shown) and before any that comes later, and
  // carries only the output no read has taken (`renderNoticeOutput`).
  setHandler(taskEndedSignal, async (notice) => {
    if (ignoredUnencryptedSignal(taskEndedSignal.name, notice)) return;
    if (ignoredSignalForOther(taskEndedSignal.name, 'taskId', input.taskId, notice?.taskId, 'optional'))
      return;
    taskEnded = true;
    if (notice === undefined) return;
    const at = () => positionOn(memo, notice.hostQueue);
    const from = readsInFlight === 0 ? at() : await inTurn(at);
    const output = renderNoticeOutput(notice, NOTICE_TAIL_CHARS, from);
    await sendNotice(
      input.taskId,
      notice.target,
      noticeText(input.taskId, notice.statusLine, output),
      notice.ownerAttribute,
      notice.viaChannel === true,
    );
  });
  const abandoned = new Set<string>();
  const reading = new Map<string, CancellationScope>();
  setHandler(abandonReadSignal, (claimId) => {
    if (ignoredUnencryptedSignal(abandonReadSignal.name, claimId)) return;
    abandoned.add(claimId);
    reading.get(claimId)?.cancel();
  });

  /** One host read, in its turn. */
  const readOnHost = async (claim: HostReadClaim): Promise<HostReadResult> => {
    const late = (): HostReadResult => ({
      kind: 'late',
      position: positionOn(memo, claim.hostQueue),
      serverTimeMs: Date.now(),
    });
    if (abandoned.delete(claim.claimId)) return late();
    // The answer must reach the caller in time: the host's pick-up, the wait, the way back.
    const waitMs = Math.min(
      claim.waitMs,
      claim.answerByMs - Date.now() - HOST_READ_START_MS - READ_ANSWER_MARGIN_MS,
    );
    if (waitMs < 0) return late();
    const from = claim.peekFrom ?? positionOn(memo, claim.hostQueue);
    const { readOutput } = proxyActivities<CommandActivities>({
      taskQueue: controlTaskQueue(claim.hostQueue),
      // A host whose worker is down never takes it: the caller then answers with what the server holds.
      scheduleToStartTimeout: HOST_READ_START_MS,
      startToCloseTimeout: waitMs + READ_ACTIVITY_SLACK_MS,
      retry: { maximumAttempts: 1 },
    });
    const scope = new CancellationScope();
    reading.set(claim.claimId, scope);
    let read: HostRead;
    try {
      read = await scope.run(() =>
        readOutput({
          taskId: input.taskId,
          from,
          waitMs,
          wholeLines: claim.wholeLines,
          ...(claim.terminal ? { terminal: claim.terminal } : {}),
        }),
      );
    } catch (err) {
      if (isCancellation(err)) return late();
      if (
        err instanceof ActivityFailure &&
        err.cause instanceof TimeoutFailure &&
        err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
      ) {
        return {
          kind: 'host-unavailable',
          position: positionOn(memo, claim.hostQueue),
          serverTimeMs: Date.now(),
        };
      }
      throw ApplicationFailure.create({
        message: `the read on the task's host failed: ${rootMessage(err)}`,
        nonRetryable: true,
      });
    } finally {
      reading.delete(claim.claimId);
      abandoned.delete(claim.claimId);
    }
    // Bytes its caller will never get must stay for the next read.
    if (Date.now() > claim.answerByMs - READ_ANSWER_MARGIN_MS) return late();
    if (claim.peekFrom !== undefined) {
      counted(); // A peek grows the history as a read does.
      return { kind: 'read', before: from, read, serverTimeMs: Date.now() };
    }
    const before = advance(claim.claimId, read.upTo, false, claim.hostQueue);
    return { kind: 'read', before, read, serverTimeMs: Date.now() };
  };

  setHandler(readUpdate, (claim) => inTurn(() => readOnHost(claim)), {
    validator: (claim) => {
      refuseUnencryptedArgument(readUpdate.name, claim);
      refuseCopiedClaim(readUpdate.name, input.taskId, claim);
      if (
        typeof claim?.claimId !== 'string' ||
        typeof claim.hostQueue !== 'string' ||
        !(claim.waitMs >= 0) ||
        typeof claim.answerByMs !== 'number' ||
        (claim.peekFrom !== undefined &&
          !(isOffset(claim.peekFrom.stdout) && isOffset(claim.peekFrom.stderr)))
      ) {
        throw new Error('read: bad request');
      }
      // Too late to read and answer in time: this host's clock is behind the server's.
      if (Date.now() > claim.answerByMs - HOST_READ_START_MS)
        throw new Error(`${CLAIM_EXPIRED}${Date.now()}`);
    },
  });

  setHandler(
    claimUpdate,
    ({ claimId, upTo, taskEnded: ended, hostQueue }) => {
      const apply = (): ClaimResult => {
        const before = advance(claimId, upTo, ended, hostQueue);
        taskEnded ||= ended;
        return { before, serverTimeMs: Date.now() };
      };
      return readsInFlight === 0 ? apply() : inTurn(apply);
    },
    {
      validator: (claim) => {
        refuseUnencryptedArgument(claimUpdate.name, claim);
        refuseCopiedClaim(claimUpdate.name, input.taskId, claim);
        const { claimId, upTo, expiresAtMs } = claim;
        if (typeof claimId !== 'string' || !isOffset(upTo?.stdout) || !isOffset(upTo?.stderr)) {
          throw new Error('claim: bad request');
        }
        // Workflow time is when this workflow task started, on the server's clock.
        if (Date.now() > expiresAtMs) throw new Error(`${CLAIM_EXPIRED}${Date.now()}`);
      },
    },
  );

  if (!taskEnded) taskEnded = await taskHasEnded(input.taskId);

  const renew = () => claims >= input.claimsPerRun || workflowInfo().continueAsNewSuggested;
  const continueAsNew = async () => {
    await condition(allHandlersFinished);
    await makeContinueAsNewFunc<typeof bashOutputReader>({ memo: { ...memo } })({
      ...input,
      position: memo.position,
      recentClaims: memo.recentClaims,
      taskEnded,
      ...(memo.host !== undefined ? { host: memo.host } : {}),
    });
  };
  const probeMs = input.probeIntervalMs ?? READER_PROBE_INTERVAL_MS;
  if (atRest) {
    for (;;) {
      if (!taskEnded) {
        // One probe timer an interval: claims and reads do not start it again.
        const probe = timer(probeMs);
        await condition(() => probe.fired || taskEnded || renew());
        probe.cancel();
        if (probe.fired && !taskEnded) taskEnded = await taskHasEnded(input.taskId);
        if (taskEnded) quietSinceMs = Date.now();
      } else {
        // Ends idleMs after the last claim: a claim moves that time, the timer runs on to its end.
        const leftMs = input.idleMs - (Date.now() - quietSinceMs);
        if (leftMs <= 0 && !renew()) break;
        const idle = timer(leftMs);
        await condition(() => idle.fired || renew());
        idle.cancel();
      }
      if (renew()) await continueAsNew();
    }
  } else {
    for (;;) {
      const seen = claims;
      const wasEnded = taskEnded;
      const woke = () => claims !== seen || taskEnded !== wasEnded || renew();
      if (wasEnded) {
        if (!(await condition(woke, input.idleMs))) break;
      } else if (!(await condition(woke, probeMs))) taskEnded = await taskHasEnded(input.taskId);
      if (renew()) await continueAsNew();
    }
  }
  await condition(allHandlersFinished);
  return memo.position;
}

/**
 * A claim or read copied from a history: to another task's reader (it would move that position
 * past output nobody showed), or to this reader under a new update id (a read would take output
 * its caller never gets). Under its recorded id the server answers with the recorded outcome.
 */
function refuseCopiedClaim(update: string, taskId: string, claim: { claimId?: unknown; taskId?: unknown }) {
  refuseArgumentForOther(update, 'taskId', taskId, claim?.taskId, 'optional');
  refuseArgumentOfOtherUpdate(update, 'claimId', claim?.claimId);
}

/** A timer that says when it fired; cancelled, it never does. */
function timer(ms: number): { readonly fired: boolean; cancel(): void } {
  const scope = new CancellationScope();
  let fired = false;
  // A timer of zero is not one Temporal starts: a moment is the least.
  scope
    .run(() => sleep(Math.max(1, ms)))
    .then(
      () => {
        fired = true;
      },
      () => undefined, // Cancelled.
    );
  return {
    get fired() {
      return fired;
    },
    cancel: () => scope.cancel(),
  };
}

/** Tells the task this reader exists; a task that cannot take the signal has ended (or is gone). */
async function taskHasEnded(taskId: string): Promise<boolean> {
  return getExternalWorkflowHandle(taskId)
    .signal(outputReaderStartedSignal)
    .then(
      () => false,
      () => true,
    );
}

/** The innermost failure's message, on one line. */
function rootMessage(err: unknown): string {
  let cause = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return message.split('\n', 1)[0] ?? message;
}

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
