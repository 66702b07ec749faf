import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import { HEARTBEAT_TIMEOUT_MS, KILL_GRACE_MS } from '../shared/limits.js';
import { noticeText } from '../shared/notice.js';
import { outputReaderId } from '../shared/read-position.js';
import { statusSearchAttribute } from '../shared/search-attributes.js';
import {
  failedState,
  finishedState,
  isWorkerLoss,
  KILLED_BEFORE_START,
  statusLine,
  type TaskState,
} from '../shared/status-line.js';
import type {
  BashTaskInput,
  BashTaskResult,
  CommandOutcome,
  CommandSpec,
  NoticeTarget,
  TaskId,
} from '../shared/task.js';
import { RunFailureType, TaskStatus } from '../shared/task.js';
import { completionNotice } from './completion-notice.js';
import { outputReaderStartedSignal, taskEndedSignal } from './reader-signals.js';

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
 * A background task with a notice target then starts its completion notice, and ends as it would
 * without one.
 */
export async function bashTask(input: BashTaskInput): Promise<BashTaskResult> {
  let hasReader = false;
  setHandler(outputReaderStartedSignal, () => {
    hasReader = true;
  });
  const run = await runTask(input).then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (input.background) {
    await Promise.all([
      input.notice
        ? startNotice(input.taskId, input.notice, run.ok ? finishedState(run.result) : endedState(run.error))
        : undefined,
      // Runs recorded before readers were told are replayed without the signal.
      hasReader && patched(TELL_READER_PATCH) ? tellReader(input.taskId) : undefined,
    ]);
  }
  if (!run.ok) throw run.error;
  return run.result;
}

async function runTask(input: BashTaskInput): Promise<BashTaskResult> {
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
    const { timedOut, ...ended } = await outcome;
    // The timer or the activity's own deadline, whichever the workflow heard of first.
    const result: BashTaskResult = { ...ended, timedOutAfterMs: timedOut ? timeoutMs : timedOutAfterMs };
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

const TELL_READER_PATCH = 'tell-output-reader-the-task-ended';

/** Tells the task's output reader that the task ended, so it can end once idle. */
async function tellReader(taskId: TaskId): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(outputReaderId(taskId))
      .signal(taskEndedSignal)
      .catch(() => undefined),
  );
}

/**
 * Starts the notice as an abandoned child and waits only for its start (a child not yet started
 * when its parent closes may never start). It runs on this task queue; only its inject activity
 * goes to the agent host. A notice that cannot start is logged, never the task's failure.
 */
async function startNotice(taskId: TaskId, target: NoticeTarget, state: TaskState): Promise<void> {
  try {
    // A kill cancels this workflow; the notice must still start.
    await CancellationScope.nonCancellable(() =>
      startChild(completionNotice, {
        workflowId: `${taskId}-notice`,
        args: [{ ...target, content: noticeText(taskId, statusLine(state)) }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A task reset and run again must not notify twice: its notice id is taken.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `Completion notice for ${taskId}`,
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      log.info('completion notice already sent', { taskId });
    } else {
      log.warn('completion notice could not start', { taskId, error: String(err) });
    }
  }
}

/** The state a run that threw stands for; a kill before any worker took the command has its own reason. */
function endedState(err: unknown): TaskState {
  if (isCancellation(err)) return { status: 'failed', reason: KILLED_BEFORE_START };
  return failedState(err);
}

function endStatus(outcome: CommandOutcome): TaskStatus {
  return outcome.signal === null ? TaskStatus.completed : TaskStatus.killed;
}

function setStatus(status: TaskStatus): void {
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
}
