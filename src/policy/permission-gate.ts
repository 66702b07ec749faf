import { messageOf, oneLine } from '../shared/checks.js';
import { CommandDeniedError, CommandNotApprovedError } from '../shared/errors.js';
import type { Approver, PermissionDecision, PermissionPolicy, PermissionRequest } from './policy-types.js';

export interface PermissionOptions {
  /** Decides each call before anything starts. @default every call is allowed */
  policy?: PermissionPolicy;
  /** Answers the policy's `ask`. @default none: an `ask` is a denial */
  approve?: Approver;
}

/** Reason of an `ask` that gave none. */
const ASK_WITHOUT_REASON = 'the permission policy asks for approval';

/**
 * Resolves when the call may start; otherwise throws `CommandDeniedError` or
 * `CommandNotApprovedError` with a one-line reason. Fails closed: a policy or approver that throws,
 * or an answer that is no decision, refuses the call.
 */
export async function checkPermission(
  request: PermissionRequest,
  options: PermissionOptions,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (options.policy === undefined) return;
  let decision: PermissionDecision;
  try {
    decision = await options.policy(request);
  } catch (err) {
    throw new CommandDeniedError(`the permission policy failed: ${messageOf(err)}`);
  }
  switch (decision?.action) {
    case 'allow':
      return;
    case 'deny':
      throw new CommandDeniedError(oneLine(decision.reason ?? '') || 'the permission policy denied it');
    case 'ask': {
      const reason = oneLine(decision.reason ?? '') || ASK_WITHOUT_REASON;
      if (options.approve === undefined)
        throw new CommandDeniedError(`${reason}, and no approver is configured`);
      if (!(await approval(options.approve, request, reason, signal)))
        throw new CommandNotApprovedError(reason);
      return;
    }
    default:
      throw new CommandDeniedError('the permission policy gave no decision');
  }
}

/** The approver's answer, or a refusal when the call is aborted first. */
async function approval(
  approve: Approver,
  request: PermissionRequest,
  reason: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const aborted = () => new CommandNotApprovedError('the call was aborted while waiting for approval');
  if (signal?.aborted) throw aborted();
  const waiting = new AbortController();
  let onAbort: (() => void) | undefined;
  const abortedWhileWaiting = new Promise<never>((_, reject) => {
    onAbort = () => {
      waiting.abort();
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const answer = Promise.resolve()
      .then(() => approve(request, reason, waiting.signal))
      .then(
        (approved) => approved === true,
        (err: unknown) => {
          throw new CommandNotApprovedError(`the approver failed: ${messageOf(err)}`);
        },
      );
    return await Promise.race([answer, abortedWhileWaiting]);
  } finally {
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}
