/**
 * The client's side of the codec's refusal (shared/unencrypted-payload.ts): what the server gives
 * for a task, an approval or a reminder that was not encrypted, while this client's codec holds
 * keys, is refused with one line and never used or shown. A forger without the keys can copy a
 * session's owner attribute (search attributes are not encrypted), but not write a memo, a result or
 * an answer that this client takes for one of its own.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { UnencryptedPayloadError } from '../shared/errors.js';
import { isUnencryptedPayload } from '../shared/unencrypted-payload.js';

/** `value`, unless it was not encrypted: then throws, naming `subject` (`task <id>`) and the `part`. */
export function refuseUnencrypted<T>(value: T, subject: string, part: string): T {
  if (isUnencryptedPayload(value)) throw new UnencryptedPayloadError(subject, part);
  return value;
}

/** Throws when a field of a workflow's memo (a payload each) was not encrypted. */
export function refuseUnencryptedMemo(memo: Record<string, unknown> | undefined, subject: string): void {
  if (hasUnencryptedMemo(memo)) throw new UnencryptedPayloadError(subject, 'memo');
}

/** Whether a field of a memo was not encrypted. */
export function hasUnencryptedMemo(memo: Record<string, unknown> | undefined): boolean {
  return Object.values(memo ?? {}).some(isUnencryptedPayload);
}

/**
 * Whether a listed run is one to show: a run whose memo was not encrypted is left out of listings
 * (under a key every run durable-bash starts has an encrypted memo; such a run was forged, or
 * started before encryption was turned on).
 */
export function listable(execution: Pick<WorkflowExecutionInfo, 'memo'>): boolean {
  return !hasUnencryptedMemo(execution.memo);
}
