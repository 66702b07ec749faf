import {
  allHandlersFinished,
  condition,
  defineUpdate,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  patched,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { READER_PROBE_INTERVAL_MS } from '../shared/limits.js';
import {
  CLAIM_EXPIRED,
  type ClaimRequest,
  type ClaimResult,
  type OutputReaderInput,
  RECENT_CLAIMS_KEPT,
  type ReaderMemo,
  type ReadPosition,
} from '../shared/read-position.js';
import { outputReaderStartedSignal, taskEndedSignal } from './reader-signals.js';

export { taskEndedSignal } from './reader-signals.js';

/** Moves the read position up to the claim and returns where it stood: the claimer owns the bytes between. */
export const claimUpdate = defineUpdate<ClaimResult, [ClaimRequest]>('claim');

const PROBE_PATCH = 'reader-tells-and-probes-its-task';

/**
 * Holds the `bash_output` read position of one task. Updates serialize claims, so two readers never
 * get the same bytes. A separate workflow from the task's run because it must accept claims after
 * the run closed, and continue as new when reads pile up (the run cannot: its command activity is
 * pending). The memo mirrors the position and the latest claims, for readers with no worker to ask.
 *
 * While the task runs the reader never ends (its memo would be the only copy of the position, and
 * retention deletes closed runs). It tells the task it exists, so the task signals it at the end,
 * and signals the task again every READER_PROBE_INTERVAL_MS: a signal to a task that has closed
 * fails, which is how a reader learns of an end it was not told. Once the task ended, the reader
 * ends after `idleMs` without claims.
 */
export async function bashOutputReader(input: OutputReaderInput): Promise<ReadPosition> {
  // Runs started by the first version (no `taskEnded` in their input) always ended when idle.
  const firstVersion = input.taskEnded === undefined;
  let memo: ReaderMemo = { position: input.position, recentClaims: input.recentClaims ?? [] };
  let taskEnded = input.taskEnded ?? false;
  let claims = 0;

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
      claims++;
      upsertMemo({ ...memo });
      return { before, serverTimeMs: Date.now() };
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

  // Runs started by the second version neither told nor probed their task.
  const probes = !firstVersion && patched(PROBE_PATCH);
  if (probes && !taskEnded) taskEnded = await taskHasEnded(input.taskId);

  const renew = () => claims >= input.claimsPerRun || workflowInfo().continueAsNewSuggested;
  for (;;) {
    const seen = claims;
    const wasEnded = taskEnded;
    const woke = () => claims !== seen || taskEnded !== wasEnded || renew();
    if (firstVersion || wasEnded) {
      if (!(await condition(woke, input.idleMs))) break;
    } else if (probes) {
      const probeMs = input.probeIntervalMs ?? READER_PROBE_INTERVAL_MS;
      if (!(await condition(woke, probeMs))) taskEnded = await taskHasEnded(input.taskId);
    } else {
      await condition(woke);
    }
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

/** Tells the task this reader exists; a task that cannot take the signal has ended (or is gone). */
async function taskHasEnded(taskId: string): Promise<boolean> {
  return getExternalWorkflowHandle(taskId)
    .signal(outputReaderStartedSignal)
    .then(
      () => false,
      () => true,
    );
}

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
