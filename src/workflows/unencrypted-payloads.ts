/**
 * The workflows' side of the codec's refusal (shared/unencrypted-payload.ts): a workflow started
 * with an unencrypted input fails at once, an update's validator rejects an unencrypted argument,
 * a signal's handler ignores one and the worker logs it. For a payload the codec decrypted, none of
 * these does anything, so every history recorded before replays as it ran.
 */
import { ApplicationFailure, log, workflowInfo } from '@temporalio/workflow';
import {
  isUnencryptedPayload,
  UNENCRYPTED_INPUT_FAILURE,
  unencryptedArgument,
  unencryptedInput,
  unencryptedSignal,
} from '../shared/unencrypted-payload.js';

/**
 * Ends the workflow, before it does anything, when one of its inputs was not encrypted: a client
 * without the key started it. Its failure is its one command.
 */
export function refuseUnencryptedInput(...inputs: unknown[]): void {
  if (!inputs.some(isUnencryptedPayload)) return;
  throw ApplicationFailure.create({
    type: UNENCRYPTED_INPUT_FAILURE,
    message: unencryptedInput(workflowInfo().workflowType),
    nonRetryable: true,
  });
}

/**
 * An update validator's first check: an unencrypted argument is rejected, so the update never
 * enters the history and its caller gets the reason.
 */
export function refuseUnencryptedArgument(update: string, argument: unknown): void {
  if (isUnencryptedPayload(argument)) throw new Error(unencryptedArgument(update));
}

/**
 * A signal handler's first check: true, and logged (a workflow log is not repeated on replay), when
 * the signal's argument was not encrypted; the handler then does nothing.
 */
export function ignoredUnencryptedSignal(signal: string, argument: unknown): boolean {
  if (!isUnencryptedPayload(argument)) return false;
  log.warn(unencryptedSignal(signal));
  return true;
}
