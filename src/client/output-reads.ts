import {
  type Client,
  isGrpcDeadlineError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { READER_CLAIMS_PER_RUN, READER_IDLE_MS } from '../shared/limits.js';
import { outputReaderId, type ReadPosition, START_OF_OUTPUT } from '../shared/read-position.js';
import type { TaskState } from '../shared/status-line.js';
import type { StreamTail } from '../shared/task.js';
import { bashOutputReader, claimUpdate } from '../workflows/output-reader.js';
import { decodeText, tailBytes, unfinishedCharLength } from './stream-text.js';
import type { TaskSnapshot } from './task-snapshot.js';

/** How long a read waits for a worker to take its claim before it answers with what the server holds. */
export const CLAIM_WAIT_MS = 3_000;

/**
 * How long a claim stays valid, on the server's clock. Shorter than CLAIM_WAIT_MS so a claim a
 * worker takes late (after the reader stopped waiting) is refused instead of skipping bytes.
 */
export const CLAIM_EXPIRY_MS = 1_500;

/** One stream's share of a read. */
export interface StreamRead {
  /** The new output, decoded. */
  text: string;
  /** Bytes between the previous read and `text` that no longer fit in what the server holds. */
  droppedBytes: number;
  /** The stream's complete copy on the task's host, when one exists. */
  spillPath?: string;
}

/** The answer to one `bash_output` call. */
export interface OutputRead {
  state: TaskState;
  stdout: StreamRead;
  stderr: StreamRead;
  /** The host whose disk holds the spill files. */
  host: string | undefined;
  /** No worker took the claim in time: the read position did not move, so this output comes again. */
  unclaimed: boolean;
}

export interface ReaderOptions {
  /** The queue whose workers run the reader workflow (the command workers' queue). */
  taskQueue: string;
  /** @default READER_CLAIMS_PER_RUN */
  claimsPerRun?: number;
  /** @default READER_IDLE_MS */
  idleMs?: number;
}

/**
 * Takes the output between a task's read position and what `snapshot` holds, moving the position
 * past it. Bytes of an unfinished character stay for the next read while the task runs.
 */
export async function readNewOutput(
  client: Client,
  snapshot: TaskSnapshot,
  options: ReaderOptions,
): Promise<OutputRead> {
  const stdout = tailBytes(snapshot.stdout);
  const stderr = tailBytes(snapshot.stderr);
  const upTo: ReadPosition = {
    stdout: snapshot.stdout.bytes - (snapshot.final ? 0 : unfinishedCharLength(stdout)),
    stderr: snapshot.stderr.bytes - (snapshot.final ? 0 : unfinishedCharLength(stderr)),
  };
  const claimed = await claim(client, snapshot.taskId, upTo, options);
  const from = claimed ?? (await readerPosition(client, snapshot.taskId));
  return {
    state: snapshot.state,
    stdout: slice(snapshot.stdout, stdout, from.stdout, upTo.stdout),
    stderr: slice(snapshot.stderr, stderr, from.stderr, upTo.stderr),
    host: snapshot.host,
    unclaimed: claimed === undefined,
  };
}

/** The bytes `[from, upTo)` of a stream whose tail holds its last `tail.length` bytes. */
function slice(stream: StreamTail, tail: Buffer, from: number, upTo: number): StreamRead {
  const tailStart = stream.bytes - tail.length;
  const first = Math.max(from, tailStart);
  const text =
    first < upTo ? decodeText(tail.subarray(first - tailStart, upTo - tailStart), from < tailStart) : '';
  const droppedBytes = Math.max(0, Math.min(tailStart, upTo) - from);
  return { text, droppedBytes, ...(stream.spillPath !== undefined ? { spillPath: stream.spillPath } : {}) };
}

/**
 * Claims the bytes before `upTo` in the task's reader workflow, starting it if needed (from the
 * position a closed reader left). Resolves to the position before the claim, or undefined when no
 * worker took the claim within CLAIM_WAIT_MS.
 */
async function claim(
  client: Client,
  taskId: string,
  upTo: ReadPosition,
  options: ReaderOptions,
): Promise<ReadPosition | undefined> {
  const deadline = Date.now() + CLAIM_WAIT_MS;
  let resumeFrom: ReadPosition | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const reader = new WithStartWorkflowOperation(bashOutputReader, {
      workflowId: outputReaderId(taskId),
      taskQueue: options.taskQueue,
      args: [
        {
          taskId,
          position: resumeFrom ?? START_OF_OUTPUT,
          claimsPerRun: options.claimsPerRun ?? READER_CLAIMS_PER_RUN,
          idleMs: options.idleMs ?? READER_IDLE_MS,
        },
      ],
      memo: { position: resumeFrom ?? START_OF_OUTPUT },
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      // A first reader starts from zero; after a reader closed, only a start from its position may follow.
      workflowIdReusePolicy:
        resumeFrom === undefined
          ? WorkflowIdReusePolicy.REJECT_DUPLICATE
          : WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    try {
      return await client.withDeadline(deadline, () =>
        client.workflow.executeUpdateWithStart(claimUpdate, {
          args: [{ upTo, expiresAtMs: Date.now() + CLAIM_EXPIRY_MS }],
          startWorkflowOperation: reader,
        }),
      );
    } catch (err) {
      if (isGrpcDeadlineError(err) || Date.now() >= deadline) return undefined;
      if (err instanceof WorkflowUpdateFailedError) return undefined; // refused as expired
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) && !closedUnderUs(err)) throw err;
      resumeFrom = await readerPosition(client, taskId);
    }
  }
  return undefined;
}

/** The position a task's reader holds (its memo), readable with no worker; the start when there is none. */
async function readerPosition(client: Client, taskId: string): Promise<ReadPosition> {
  try {
    const description = await client.workflow.getHandle(outputReaderId(taskId)).describe();
    const position = description.memo?.position as Partial<ReadPosition> | undefined;
    return { stdout: position?.stdout ?? 0, stderr: position?.stderr ?? 0 };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return START_OF_OUTPUT;
    throw err;
  }
}

/** The reader's run closed between admitting the claim and taking it (idle end, continue-as-new). */
function closedUnderUs(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}
