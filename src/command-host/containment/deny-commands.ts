/** The worker's deny rules, applied on the host before a command is spawned. */
import { ApplicationFailure } from '@temporalio/activity';
import { type CompiledRules, checkCommand } from '../../policy/rules.js';
import { RunFailureType } from '../../shared/task.js';

/**
 * Refuses a command the worker's deny rules match (or cannot read with certainty) before anything
 * is spawned: the task ends failed with `denied by the worker: <reason>`, never retried.
 */
export async function assertCommandAllowed(command: string, rules: CompiledRules | undefined): Promise<void> {
  if (rules === undefined) return;
  const verdict = await checkCommand(command, rules);
  if (verdict.action === 'allow') return;
  throw ApplicationFailure.create({
    type: RunFailureType.deniedByWorker,
    message: `denied by the worker: ${verdict.reason}`,
    nonRetryable: true,
  });
}
