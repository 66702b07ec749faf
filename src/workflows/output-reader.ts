import {
  allHandlersFinished,
  condition,
  defineUpdate,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClaimRequest, OutputReaderInput, ReadPosition } from '../shared/read-position.js';

/** Moves the read position up to the claim and returns where it stood: the claimer owns the bytes between. */
export const claimUpdate = defineUpdate<ReadPosition, [ClaimRequest]>('claim');

/**
 * Holds the `bash_output` read position of one task. Updates serialize claims, so two readers never
 * get the same bytes. A separate workflow from the task's run because it must accept claims after
 * the run closed, and continue as new when reads pile up (the run cannot: its command activity is
 * pending). The position is mirrored in the memo so a reader can see it when no worker answers.
 */
export async function bashOutputReader(input: OutputReaderInput): Promise<ReadPosition> {
  let position = input.position;
  let claims = 0;

  setHandler(
    claimUpdate,
    ({ upTo }) => {
      const before = position;
      position = {
        stdout: Math.max(position.stdout, upTo.stdout),
        stderr: Math.max(position.stderr, upTo.stderr),
      };
      claims++;
      upsertMemo({ position });
      return before;
    },
    {
      validator: ({ upTo, expiresAtMs }) => {
        if (!isOffset(upTo?.stdout) || !isOffset(upTo?.stderr)) throw new Error('claim: bad read position');
        // Workflow time is when this task started, on the server's clock.
        if (Date.now() > expiresAtMs) throw new Error('claim: expired before a worker took it');
      },
    },
  );

  for (;;) {
    const seen = claims;
    const renew = () => claims >= input.claimsPerRun || workflowInfo().continueAsNewSuggested;
    const active = await condition(() => claims !== seen || renew(), input.idleMs);
    if (!active) break;
    if (renew()) {
      await condition(allHandlersFinished);
      await makeContinueAsNewFunc<typeof bashOutputReader>({ memo: { position } })({ ...input, position });
    }
  }
  await condition(allHandlersFinished);
  return position;
}

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
