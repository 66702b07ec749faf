import { messageOf, oneLine } from '../shared/checks.js';
import { CommandDeniedError, CommandNotApprovedError } from '../shared/errors.js';
import type { Approver, PermissionDecision, PermissionPolicy, PermissionRequest } from './policy-types.js';

export interface PermissionOptions {
  /** Decides each call before anything starts. @default every call is allowed */
  policy?: PermissionPolicy;
  /**
   * Answers the policy's `ask`. @default none: an `ask` then waits for a durable decision where the
   * session takes notices (docs/PERMISSIONS.md#durable-approvals), and is a denial elsewhere
   */
  approve?: Approver;
}

/** Reason of an `ask` that gave none. */
const ASK_WITHOUT_REASON = 'the permission policy asks for approval';

/** What the gate decided for a call it let through: start it, or make a durable approval request. */
export type PermissionVerdict = { kind: 'allowed' } | { kind: 'deferred'; reason: string };

const ALLOWED: PermissionVerdict = { kind: 'allowed' };

/**
 * Resolves with `allowed` when the call may start, or `deferred` (the policy's reason) when its `ask`
 * is to wait for a durable decision: no `approve` callback, or one that answered `'defer'`, where
 * the call `canDefer` (its session takes notices). Otherwise throws `CommandDeniedError` or
 * `CommandNotApprovedError` with a one-line reason. Fails closed: a policy or approver that throws,
 * or an answer that is no decision, refuses the call.
 */
export async function checkPermission(
  request: PermissionRequest,
  options: PermissionOptions,
  signal: AbortSignal | undefined,
  canDefer = false,
): Promise<PermissionVerdict> {
  if (options.policy === undefined) return ALLOWED;
  let decision: PermissionDecision;
  try {
    decision = await options.policy(request);
  } catch (err) {
    throw new CommandDeniedError(`the permission policy failed: ${messageOf(err)}`);
  }
  switch (decision?.action) {
    case 'allow':
      return ALLOWED;
    case 'deny':
      throw new CommandDeniedError(oneLine(decision.reason ?? '') || 'the permission policy denied it');
    case 'ask': {
      const reason = oneLine(decision.reason ?? '') || ASK_WITHOUT_REASON;
      if (options.approve === undefined) {
        if (canDefer) return { kind: 'deferred', reason };
        throw new CommandDeniedError(`${reason}, and no approver is configured`);
      }
      const answer = await approval(options.approve, request, reason, signal);
      if (answer === 'defer') {
        if (canDefer) return { kind: 'deferred', reason };
        throw new CommandNotApprovedError(
          `${reason}; the approver deferred it, and approval requests need an agent host that takes notices`,
        );
      }
      if (!answer) throw new CommandNotApprovedError(reason);
      return ALLOWED;
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
): Promise<boolean | 'defer'> {
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
        (approved) => (approved === 'defer' ? 'defer' : approved === true),
        (err: unknown) => {
          throw new CommandNotApprovedError(`the approver failed: ${messageOf(err)}`);
        },
      );
    return await Promise.race([answer, abortedWhileWaiting]);
  } finally {
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}
