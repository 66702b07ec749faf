import {
  ActivityFailure,
  type Client,
  type Payload,
  TimeoutFailure,
  type WorkflowExecutionDescription,
  WorkflowFailedError,
} from '@temporalio/client';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { failedState, finishedState, KILLED_BEFORE_START, type TaskState } from '../shared/status-line.js';
import type { BashTaskResult, CommandProgress, LimitsReached, StreamTail } from '../shared/task.js';
import { bashTask } from '../workflows/bash-task.js';

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
  /** The task's workflow closed: its output will not grow. */
  final: boolean;
  /** The limits a finished task ran into. */
  limits?: LimitsReached;
}

const NO_OUTPUT: StreamTail = { bytes: 0, tailBase64: '' };

/**
 * Reads a task from its workflow's description: a running task's output comes from the command
 * activity's last heartbeat (kept by the server), a finished one's from the workflow's result.
 */
export function snapshotFromDescription(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<TaskSnapshot> {
  const owner = description.typedSearchAttributes.get(ownerSearchAttribute);
  const base = { taskId: description.workflowId, owner };
  switch (description.status.name) {
    case 'RUNNING':
      return runningSnapshot(client, description).then((snapshot) => ({ ...base, ...snapshot }));
    case 'COMPLETED':
    case 'FAILED':
      return closedSnapshot(client, description).then((snapshot) => ({ ...base, ...snapshot }));
    default:
      return Promise.resolve({
        ...base,
        state: {
          status: 'failed',
          // A kill before any worker took the command cancels the workflow itself.
          reason:
            description.status.name === 'CANCELLED'
              ? KILLED_BEFORE_START
              : `its workflow was ${description.status.name.toLowerCase().replaceAll('_', ' ')}`,
        },
        stdout: NO_OUTPUT,
        stderr: NO_OUTPUT,
        host: undefined,
        final: true,
      });
  }
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
  const command = description.raw.pendingActivities?.find(
    (activity) => activity.activityType?.name === 'runCommand',
  );
  const payload = command?.heartbeatDetails?.payloads?.[0];
  const progress = payload ? await decodePayload<CommandProgress>(client, payload) : undefined;
  return {
    state: { status: 'running' },
    stdout: progress?.stdout ?? NO_OUTPUT,
    stderr: progress?.stderr ?? NO_OUTPUT,
    host: progress?.host,
    final: false,
  };
}

async function closedSnapshot(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<SnapshotBody> {
  const handle = client.workflow.getHandle<typeof bashTask>(description.workflowId, description.runId);
  try {
    const result: BashTaskResult = await handle.result();
    return {
      state: finishedState(result),
      stdout: result.stdout,
      stderr: result.stderr,
      host: result.host,
      final: true,
      ...(result.limits ? { limits: result.limits } : {}),
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
      final: true,
    };
  }
}

/** Decodes a raw payload the way the client decodes results: its codecs (in reverse), then its converter. */
async function decodePayload<T>(client: Client, payload: Payload): Promise<T> {
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  let decoded = payload;
  for (const codec of [...payloadCodecs].reverse()) {
    [decoded = decoded] = await codec.decode([decoded]);
  }
  return payloadConverter.fromPayload<T>(decoded);
}

/** The progress a timed-out command activity last heartbeated, if the failure carries it. */
function lastProgress(failure: unknown): CommandProgress | undefined {
  if (!(failure instanceof ActivityFailure) || !(failure.cause instanceof TimeoutFailure)) return undefined;
  const details = failure.cause.lastHeartbeatDetails as Partial<CommandProgress> | undefined;
  return details?.stdout !== undefined && details.stderr !== undefined
    ? (details as CommandProgress)
    : undefined;
}
