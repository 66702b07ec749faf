import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import { HEARTBEAT_TIMEOUT_MS, KILL_GRACE_MS } from '../shared/limits.js';
import { statusSearchAttribute } from '../shared/search-attributes.js';
import type { BashTaskInput, BashTaskResult, CommandOutcome, CommandSpec } from '../shared/task.js';
import { RunFailureType, TaskStatus } from '../shared/task.js';

const { resolveCommand } = proxyLocalActivities<CommandActivities>({
  // Pure arithmetic on the worker's config.
  startToCloseTimeout: '10 seconds',
});

/** Time a background command may run before Temporal gives up on it. */
const BACKGROUND_RUN_LIMIT = '365 days';

function commandActivity(spec: CommandSpec) {
  return proxyActivities<CommandActivities>({
    taskQueue: spec.taskQueue,
    // A foreground run ends by its timeout, then by SIGKILL after the grace period; the rest is slack.
    startToCloseTimeout:
      spec.timeoutMs === undefined
        ? BACKGROUND_RUN_LIMIT
        : spec.timeoutMs + KILL_GRACE_MS + HEARTBEAT_TIMEOUT_MS,
    // The only way to notice that the worker running the command is gone.
    heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
    // A second attempt would run the command a second time.
    retry: { maximumAttempts: 1 },
    // A kill's outcome (the signal, the last output) comes back from the activity.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }).runCommand;
}

/**
 * One run of one command. Resolves the request against the worker's config, runs the command
 * activity, and for a foreground run ends it when its timeout fires. A cancellation of the workflow
 * (a kill, an aborted call) reaches the activity, which ends the process group and reports how.
 */
export async function bashTask(input: BashTaskInput): Promise<BashTaskResult> {
  const spec = await resolveCommand(input);
  const command = new CancellationScope();
  const outcome = command.run(() => commandActivity(spec)(spec));

  let timedOutAfterMs: number | undefined;
  const timer = new CancellationScope();
  const { timeoutMs } = spec;
  if (timeoutMs !== undefined) {
    timer
      .run(() => sleep(timeoutMs))
      .then(
        () => {
          timedOutAfterMs = timeoutMs;
          command.cancel();
        },
        () => undefined, // Cancelled: the command ended first.
      );
  }

  try {
    const result: BashTaskResult = { ...(await outcome), timedOutAfterMs };
    setStatus(endStatus(result));
    return result;
  } catch (err) {
    if (timedOutAfterMs !== undefined && isCancellation(err)) {
      // The timer fired and the cancellation came back without an outcome: no worker ever ran it.
      setStatus(TaskStatus.lost);
      throw ApplicationFailure.create({
        type: RunFailureType.neverStarted,
        message: `task ${spec.taskId} timed out after ${timedOutAfterMs}ms before any worker started the command`,
        nonRetryable: true,
      });
    }
    setStatus(isWorkerLoss(err) ? TaskStatus.lost : TaskStatus.failed);
    throw err;
  } finally {
    timer.cancel();
  }
}

function endStatus(outcome: CommandOutcome): TaskStatus {
  return outcome.signal === null ? TaskStatus.completed : TaskStatus.killed;
}

function isWorkerLoss(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
}

function setStatus(status: TaskStatus): void {
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
}
