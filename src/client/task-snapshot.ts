import {
  ActivityFailure,
  ApplicationFailure,
  type Client,
  type Payload,
  TimeoutFailure,
  type WorkflowExecutionDescription,
  WorkflowFailedError,
} from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ActivityName } from '../shared/activity-names.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { failedState, finishedState, type TaskState } from '../shared/status-line.js';
import type {
  BashTaskResult,
  CommandOutcome,
  CommandProgress,
  LimitsReached,
  StreamTail,
  TerminalEnd,
} from '../shared/task.js';
import { AttemptFailureType, RunFailureType, streamFileOf } from '../shared/task.js';
import { bashTask } from '../workflows/bash-task.js';
import { decodePayload } from './decode-payload.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';

/** What the server holds of a task at one moment, read without any worker's help. */
export interface TaskSnapshot {
  taskId: string;
  /** The stored owner token (see ownership.ts); undefined for an unowned task. */
  owner: string | undefined;
  state: TaskState;
  stdout: StreamTail;
  stderr: StreamTail;
  /** The host running (or that ran) the command, once one took it. */
  host: string | undefined;
  /** That host's own queue, when known: whose spill files the byte counts are of. */
  hostQueue?: string;
  /** The task's workflow closed: its output will not grow. */
  final: boolean;
  /** The limits a finished task ran into. */
  limits?: LimitsReached;
  /** An ended terminal task's last screen, from its result. */
  terminal?: TerminalEnd;
  /** The task runs on a terminal (its memo says so). */
  onTerminal?: boolean;
}

const NO_OUTPUT: StreamTail = { bytes: 0, tail: '' };

/**
 * Reads a task from its workflow's description: a running task's output comes from the command
 * activity's last heartbeat (kept by the server), a finished one's from the workflow's result.
 */
export function snapshotFromDescription(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<TaskSnapshot> {
  const owner = description.typedSearchAttributes.get(ownerSearchAttribute);
  const onTerminal = isTerminalTask(description);
  const base = { taskId: description.workflowId, owner, ...(onTerminal ? { onTerminal } : {}) };
  switch (description.status.name) {
    case 'RUNNING':
      return runningSnapshot(client, description).then((snapshot) => ({ ...base, ...snapshot }));
    case 'COMPLETED':
    case 'FAILED':
      return closedSnapshot(client, description).then((snapshot) => ({ ...base, ...snapshot }));
    default:
      return Promise.resolve({
        ...base,
        // A kill before the command started cancels the workflow itself.
        state:
          description.status.name === 'CANCELLED'
            ? { status: 'killed' }
            : {
                status: 'failed',
                reason: `its workflow was ${description.status.name.toLowerCase().replaceAll('_', ' ')}`,
              },
        stdout: NO_OUTPUT,
        stderr: NO_OUTPUT,
        host: undefined,
        final: true,
      });
  }
}

/** Whether the task runs on a terminal (its memo says so from its start). */
export function isTerminalTask(description: WorkflowExecutionDescription): boolean {
  return typeof description.memo?.terminal === 'object' && description.memo.terminal !== null;
}

/** Whether a workflow description is one of a task's runs (not a reader, a notice or a stranger). */
export function isTaskWorkflow(description: WorkflowExecutionDescription): boolean {
  return description.type === bashTask.name;
}

type SnapshotBody = Omit<TaskSnapshot, 'taskId' | 'owner'>;

async function runningSnapshot(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<SnapshotBody> {
  const pending = description.raw.pendingActivities ?? [];
  const command = pending.find((activity) => activity.activityType?.name === ActivityName.runCommand);
  let progress = await progressOf(client, command, description.workflowId);
  const history =
    progress === undefined &&
    (command === undefined ? mayHaveRunCommand(description, pending) : mayFollowAnAttempt(description))
      ? await commandHistory(client, description)
      : undefined;
  if (command === undefined && history?.completion !== undefined)
    return closingSnapshot(
      client,
      description,
      refuseUnencrypted(
        await decodePayload<CommandOutcome>(client, history.completion),
        `task ${description.workflowId}`,
        'command outcome',
      ),
    );
  if (command === undefined && history?.lastFailed === true) {
    // Its last attempt failed (the task lost, say) and none is pending: the run is most likely
    // ending (its notice may be on its way already). Its end, if it comes within moments.
    const closed = await closedSnapshot(client, description, AbortSignal.timeout(CLOSING_WAIT_MS)).catch(
      () => undefined,
    );
    if (closed !== undefined) return closed;
  }
  // No heartbeat of the current attempt yet: what the attempt before it left, on the same host.
  if (history?.lastProgress !== undefined) {
    const earlier = await decodePayload<CommandProgress>(client, history.lastProgress)
      .then((progress) => refuseUnencrypted(progress, `task ${description.workflowId}`, 'progress'))
      .catch(() => undefined);
    if (earlier !== undefined && onCurrentHost(description, earlier)) progress = earlier;
  }
  return {
    state: { status: 'running', ...restartsOf(description) },
    stdout: progress?.stdout ?? NO_OUTPUT,
    stderr: progress?.stderr ?? NO_OUTPUT,
    host: progress?.host,
    ...(progress?.hostQueue !== undefined ? { hostQueue: progress.hostQueue } : {}),
    final: false,
  };
}

/**
 * Whether progress an earlier attempt left is of the host the run is on: a run restarted after host
 * loss names its new host in its memo, and the lost host's files are of an earlier run of the command.
 */
function onCurrentHost(description: WorkflowExecutionDescription, progress: CommandProgress): boolean {
  const movedTo = description.memo?.hostQueue;
  return typeof movedTo !== 'string' || movedTo === progress.hostQueue;
}

/** A running task's restarts after host loss, as its memo says (the workflow writes them there). */
export function restartsOf(description: WorkflowExecutionDescription): { restarts?: number } {
  const restarts = description.memo?.restarts;
  return typeof restarts === 'number' && restarts > 0 ? { restarts } : {};
}

type PendingActivity = NonNullable<WorkflowExecutionDescription['raw']['pendingActivities']>[number];

/** What a command attempt last heartbeated, decoded as the client decodes results. */
async function progressOf(
  client: Client,
  attempt: PendingActivity | undefined,
  taskId: string,
): Promise<CommandProgress | undefined> {
  const payload = attempt?.heartbeatDetails?.payloads?.[0];
  if (!payload) return undefined;
  return refuseUnencrypted(
    await decodePayload<CommandProgress>(client, payload),
    `task ${taskId}`,
    'progress',
  );
}

/**
 * The host queue of a running task's command, as its attempt's heartbeat at attach names it:
 * undefined before the command is on a host.
 */
export async function commandHostQueue(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<string | undefined> {
  if (description.status.name !== 'RUNNING') return undefined;
  const attempts = (description.raw.pendingActivities ?? []).filter(
    (activity) => activity.activityType?.name === ActivityName.runCommand,
  );
  for (const attempt of attempts) {
    const progress = await progressOf(client, attempt, description.workflowId).catch(() => undefined);
    if (typeof progress?.hostQueue === 'string') return progress.hostQueue;
  }
  return undefined;
}

/** How long a read waits for a task whose command has ended to close (a few workflow tasks). */
const CLOSING_WAIT_MS = 2_000;

/**
 * Fewest events a run has once a command activity has completed: its start, one workflow task,
 * the resolve marker, and the activity's scheduling, start and completion.
 */
const EVENTS_AFTER_A_COMMAND = 8;

/**
 * Whether a running task with no command attempt pending may be between its command's end and its
 * own close. A queued task (nothing done yet, or still choosing its host) is not: no history read.
 */
function mayHaveRunCommand(
  description: WorkflowExecutionDescription,
  pending: NonNullable<WorkflowExecutionDescription['raw']['pendingActivities']>,
): boolean {
  return (
    mayFollowAnAttempt(description) &&
    !pending.some((activity) => activity.activityType?.name === ActivityName.chooseHost)
  );
}

/** Whether the run's history is long enough to hold a command attempt that ended. */
function mayFollowAnAttempt(description: WorkflowExecutionDescription): boolean {
  return description.historyLength >= EVENTS_AFTER_A_COMMAND;
}

/** What a run's history says of its command's attempts. */
interface CommandHistory {
  /** The outcome of the attempt that completed: the command ended, and the run is closing. */
  completion: Payload | undefined;
  /**
   * No attempt completed, and the last one to end failed or timed out (other than by letting go of
   * the command for the next attempt).
   */
  lastFailed: boolean;
  /**
   * The progress the latest attempt to end without an outcome left: a timed-out attempt's last
   * heartbeat, or what an attempt that let go of a running command (a crashed worker's, failed at
   * the restart; a foreground one, released to the background) reported with its failure. Until the
   * next attempt heartbeats at attach, it is all the server holds of the output.
   */
  lastProgress: Payload | undefined;
}

/**
 * Reads the run's history for its command's attempts: an outcome that completed, when the workflow
 * has not closed yet (it still signals its reader or starts its notice; the output is then in the
 * completion, no longer in any heartbeat, and a read must not see it fall back to nothing), and the
 * progress an ended attempt left.
 */
async function commandHistory(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<CommandHistory> {
  const history = await client.workflow.getHandle(description.workflowId, description.runId).fetchHistory();
  const commandEvents = new Set<string>();
  const found: CommandHistory = { completion: undefined, lastFailed: false, lastProgress: undefined };
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === ActivityName.runCommand) {
      commandEvents.add(String(event.eventId));
      found.lastFailed = false;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && commandEvents.has(String(completed.scheduledEventId)))
      found.completion = completed.result?.payloads?.[0] ?? found.completion;
    const failed = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
    if (failed && commandEvents.has(String(failed.scheduledEventId))) {
      // One that let go of the command has a next attempt on its way, not the run's end.
      found.lastFailed = !letGo(failed.failure);
      found.lastProgress = progressIn(failed.failure) ?? found.lastProgress;
    }
  }
  return found;
}

type ProtoFailure = temporal.api.failure.v1.IFailure;

/** The progress an attempt's failure carries, if any (see `CommandHistory.lastProgress`). */
function progressIn(failure: ProtoFailure | null | undefined): Payload | undefined {
  for (let cause = failure; cause; cause = cause.cause) {
    const heartbeat = cause.timeoutFailureInfo?.lastHeartbeatDetails?.payloads?.[0];
    if (heartbeat) return heartbeat;
    const application = cause.applicationFailureInfo;
    if (application?.type && LET_GO_WITH_PROGRESS.has(application.type))
      return application.details?.payloads?.[0] ?? undefined;
  }
  return undefined;
}

/** Whether an attempt's failure is one of letting go of a running command, which the next attempt follows. */
function letGo(failure: ProtoFailure | null | undefined): boolean {
  const type = failure?.applicationFailureInfo?.type;
  return typeof type === 'string' && LET_GO_WITH_PROGRESS.has(type);
}

/** Failures of attempts that let go of a running command, reporting its progress as they did. */
const LET_GO_WITH_PROGRESS = new Set<string>([
  AttemptFailureType.workerRestarted,
  AttemptFailureType.released,
]);

/**
 * A task whose command ended and whose workflow is closing: its result once it closes, which takes
 * moments; until then (its workflow worker gone), the ended command's output with the task running.
 */
async function closingSnapshot(
  client: Client,
  description: WorkflowExecutionDescription,
  ended: CommandOutcome,
): Promise<SnapshotBody> {
  try {
    return await closedSnapshot(client, description, AbortSignal.timeout(CLOSING_WAIT_MS));
  } catch {
    // Not closed in time (or the wait failed): what the ended command's completion holds.
  }
  return {
    state: { status: 'running', ...restartsOf(description) },
    stdout: ended.stdout,
    stderr: ended.stderr,
    host: ended.host,
    ...(ended.hostQueue !== undefined ? { hostQueue: ended.hostQueue } : {}),
    final: false,
    ...(ended.terminal ? { terminal: ended.terminal } : {}),
  };
}

/** A closed task's snapshot from its result; with `signal`, waiting for a closing one until it aborts. */
async function closedSnapshot(
  client: Client,
  description: WorkflowExecutionDescription,
  signal?: AbortSignal,
): Promise<SnapshotBody> {
  const handle = client.workflow.getHandle<typeof bashTask>(description.workflowId, description.runId);
  try {
    const result: BashTaskResult = refuseUnencrypted(
      await (signal ? client.withAbortSignal(signal, () => handle.result()) : handle.result()),
      `task ${description.workflowId}`,
      'result',
    );
    // A file the result names as kept (`spillFiles`) is where reads and logs send for all of it.
    const named = (stream: 'stdout' | 'stderr'): StreamTail => {
      const spillPath = streamFileOf(result, stream);
      return spillPath === undefined ? result[stream] : { ...result[stream], spillPath };
    };
    return {
      state: finishedState(result),
      stdout: named('stdout'),
      stderr: named('stderr'),
      host: result.host,
      ...(result.hostQueue !== undefined ? { hostQueue: result.hostQueue } : {}),
      final: true,
      ...(result.limits ? { limits: result.limits } : {}),
      ...(result.terminal ? { terminal: result.terminal } : {}),
    };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    // A lost worker's timeout carries the command's last heartbeat: the output it reported.
    const last = lastProgress(err.cause);
    return {
      state: failedState(err.cause),
      stdout: last?.stdout ?? NO_OUTPUT,
      stderr: last?.stderr ?? NO_OUTPUT,
      host: last?.host,
      ...(last?.hostQueue !== undefined ? { hostQueue: last.hostQueue } : {}),
      final: true,
    };
  }
}

/**
 * The progress the failure carries, if any: a timed-out attempt's last heartbeat, the details of a
 * task that ended lost because no worker on its host came back (the workflow puts that heartbeat
 * there), or the output the attempt that found its command lost read on the host.
 */
function lastProgress(failure: unknown): CommandProgress | undefined {
  const lostWith = (err: unknown) =>
    err instanceof ApplicationFailure && err.type === RunFailureType.commandLost
      ? err.details?.[0]
      : undefined;
  const details = (
    failure instanceof ActivityFailure
      ? failure.cause instanceof TimeoutFailure
        ? failure.cause.lastHeartbeatDetails
        : lostWith(failure.cause)
      : lostWith(failure)
  ) as Partial<CommandProgress> | undefined;
  return details?.stdout !== undefined && details.stderr !== undefined
    ? (details as CommandProgress)
    : undefined;
}
