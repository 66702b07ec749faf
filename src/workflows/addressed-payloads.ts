/**
 * The workflows' side of addressed payloads (shared/addressed-payload.ts): a workflow started with
 * an input that names another workflow fails at once, an update's validator rejects an argument that
 * names another workflow (or was copied from another update), a signal's handler ignores one and
 * the worker logs it. Every payload a client of this version sends names its own workflow, so for
 * those none of these does anything; and an update's validator does not run on replay.
 */
import { ApplicationFailure, currentUpdateInfo, log, workflowInfo } from '@temporalio/workflow';
import {
  argumentForOther,
  argumentOfOtherUpdate,
  INPUT_FOR_OTHER_FAILURE,
  inputForOther,
  signalForOther,
} from '../shared/addressed-payload.js';

/**
 * Ends the workflow, before it does anything, when its input's `field` (`named`) is not this
 * workflow's id: the input was copied from another run's history and started under a new id.
 */
export function refuseInputForOther(field: string, named: unknown): void {
  const { workflowId, workflowType } = workflowInfo();
  if (named === workflowId) return;
  throw ApplicationFailure.create({
    type: INPUT_FOR_OTHER_FAILURE,
    message: inputForOther(workflowType, field, workflowId, named),
    nonRetryable: true,
  });
}

/**
 * How a message may name its workflow: `required`, or `optional` for a message that clients of
 * 0.2.0 send without the field (their messages are still taken; a field present must match).
 */
export type Naming = 'required' | 'optional';

/** An update validator's check: the argument's `field` (`named`) must be `own`. */
export function refuseArgumentForOther(
  update: string,
  field: string,
  own: string,
  named: unknown,
  naming: Naming = 'required',
): void {
  if (named === own || (named === undefined && naming === 'optional')) return;
  throw new Error(argumentForOther(update, field, own, named));
}

/**
 * An update validator's check: the argument's `field` (`named`) must be the id of the update that
 * carries it. A copy sent under a new update id is refused, and one sent under the recorded id is
 * the same update to the server, which answers with its recorded outcome and applies nothing.
 */
export function refuseArgumentOfOtherUpdate(
  update: string,
  field: string,
  named: unknown,
  naming: Naming = 'required',
): void {
  if (named === undefined && naming === 'optional') return;
  const updateId = currentUpdateInfo()?.id ?? '';
  if (named !== updateId) throw new Error(argumentOfOtherUpdate(update, field, updateId, named));
}

/**
 * A signal handler's check: true, and logged, when the argument's `field` (`named`) is not `own`;
 * the handler then does nothing.
 */
export function ignoredSignalForOther(
  signal: string,
  field: string,
  own: string,
  named: unknown,
  naming: Naming = 'required',
): boolean {
  if (named === own || (named === undefined && naming === 'optional')) return false;
  log.warn(signalForOther(signal, field, own, named));
  return true;
}
