/**
 * The start rule of a foreground run whose host keeps its deadline (`CommandSpec.deadlineAtMs`),
 * one for the real host (command-runner.ts) and the scripted one (testing/scripted-runs.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import { LATE_START_GRACE_MS } from './limits.js';
import { AttemptFailureType, type CommandSpec } from './task.js';

/**
 * The refusal of an attempt that would start `spec`'s command at `nowMs`, more than the grace past
 * its run's deadline (no worker took it in time); undefined when it may start.
 */
export function lateStartRefusal(spec: CommandSpec, nowMs: number): ApplicationFailure | undefined {
  if (spec.deadlineAtMs === undefined || nowMs < spec.deadlineAtMs + LATE_START_GRACE_MS) return undefined;
  return ApplicationFailure.create({
    type: AttemptFailureType.pastDeadline,
    message: `task ${spec.taskId} reached its deadline before any worker started the command`,
    nonRetryable: true,
  });
}
