import {
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import {
  CLAIM_EXPIRED,
  type ClaimRequest,
  type ClaimResult,
  type OutputReaderInput,
  RECENT_CLAIMS_KEPT,
  type ReaderMemo,
  type ReadPosition,
} from '../shared/read-position.js';

/** Moves the read position up to the claim and returns where it stood: the claimer owns the bytes between. */
export const claimUpdate = defineUpdate<ClaimResult, [ClaimRequest]>('claim');

/** Sent by a background task's run when it ends (if it was told of a reader), so the reader can end once idle. */
export const taskEndedSignal = defineSignal('taskEnded');

/**
 * Holds the `bash_output` read position of one task. Updates serialize claims, so two readers never
 * get the same bytes. A separate workflow from the task's run because it must accept claims after
 * the run closed, and continue as new when reads pile up (the run cannot: its command activity is
 * pending). The memo mirrors the position and the latest claims, for readers with no worker to ask.
 * While the task runs the reader never ends (its memo would then be the only copy of the position,
 * and retention deletes closed runs); once the task ended it ends after `idleMs` without claims.
 */
export async function bashOutputReader(input: OutputReaderInput): Promise<ReadPosition> {
  let memo: ReaderMemo = { position: input.position, recentClaims: input.recentClaims ?? [] };
  let taskEnded = input.taskEnded ?? false;
  let claims = 0;
  const fresh =
    (input.recentClaims?.length ?? 0) === 0 && input.position.stdout === 0 && input.position.stderr === 0;

  setHandler(taskEndedSignal, () => {
    taskEnded = true;
  });
  setHandler(
    claimUpdate,
    ({ claimId, upTo, taskEnded: ended }) => {
      const before = memo.position;
      memo = {
        position: {
          stdout: Math.max(before.stdout, upTo.stdout),
          stderr: Math.max(before.stderr, upTo.stderr),
        },
        recentClaims: [...memo.recentClaims, { claimId, before }].slice(-RECENT_CLAIMS_KEPT),
      };
      taskEnded ||= ended;
      const firstClaim = fresh && claims === 0;
      claims++;
      upsertMemo({ ...memo });
      return { before, serverTimeMs: Date.now(), firstClaim };
    },
    {
      validator: ({ claimId, upTo, expiresAtMs }) => {
        if (typeof claimId !== 'string' || !isOffset(upTo?.stdout) || !isOffset(upTo?.stderr)) {
          throw new Error('claim: bad request');
        }
        // Workflow time is when this workflow task started, on the server's clock.
        if (Date.now() > expiresAtMs) throw new Error(`${CLAIM_EXPIRED}${Date.now()}`);
      },
    },
  );

  const renew = () => claims >= input.claimsPerRun || workflowInfo().continueAsNewSuggested;
  for (;;) {
    const seen = claims;
    const wasEnded = taskEnded;
    const woke = () => claims !== seen || taskEnded !== wasEnded || renew();
    const active = wasEnded ? await condition(woke, input.idleMs) : await condition(woke).then(() => true);
    if (!active) break;
    if (renew()) {
      await condition(allHandlersFinished);
      await makeContinueAsNewFunc<typeof bashOutputReader>({ memo: { ...memo } })({
        ...input,
        position: memo.position,
        recentClaims: memo.recentClaims,
        taskEnded,
      });
    }
  }
  await condition(allHandlersFinished);
  return memo.position;
}

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
