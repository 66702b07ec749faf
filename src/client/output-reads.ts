import { randomUUID } from 'node:crypto';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { READER_CLAIMS_PER_RUN, READER_IDLE_MS } from '../shared/limits.js';
import {
  CLAIM_EXPIRED,
  type ClaimRequest,
  outputReaderId,
  type ReaderMemo,
  type ReadPosition,
  START_OF_OUTPUT,
} from '../shared/read-position.js';
import type { TaskState } from '../shared/status-line.js';
import type { LimitsReached, StreamTail } from '../shared/task.js';
import { bashOutputReader, claimUpdate } from '../workflows/output-reader.js';
import { learnServerTime, refusedAtServerTime, serverNow } from './server-clock.js';
import { decodeText, heldBytes, tailBytes, unfinishedCharLength } from './stream-text.js';
import type { TaskSnapshot } from './task-snapshot.js';

/** How long a read waits for a worker to take its claim before it answers with what the server holds. */
export const CLAIM_WAIT_MS = 4_000;

/** How long a claim stays valid on the server's clock; never past the reader's own wait. */
export const CLAIM_EXPIRY_MS = 2_500;

/** Time kept between a claim's expiry and the reader's giving up, for the workflow task in flight. */
const CLAIM_MARGIN_MS = 1_000;

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
  /** The limits a finished task ran into (said with its final status). */
  limits?: LimitsReached;
}

export interface ReaderOptions {
  /** The queue whose workers run the reader workflow (the command workers' queue). */
  taskQueue: string;
  /** @default READER_CLAIMS_PER_RUN */
  claimsPerRun?: number;
  /** @default READER_IDLE_MS */
  idleMs?: number;
  /** @default READER_PROBE_INTERVAL_MS */
  probeIntervalMs?: number;
}

/**
 * Takes the output between a task's read position and what `snapshot` holds, moving the position
 * past it. Bytes of an unfinished character stay for the next read while the task runs, and with
 * `wholeLines` (a filtered read) so does an unfinished line.
 */
export async function readNewOutput(
  client: Client,
  snapshot: TaskSnapshot,
  options: ReaderOptions,
  wholeLines = false,
): Promise<OutputRead> {
  const stdout = tailBytes(snapshot.stdout);
  const stderr = tailBytes(snapshot.stderr);
  const upTo = readableUpTo(snapshot, wholeLines, { stdout, stderr });
  const { from, claimed } = await claim(client, snapshot.taskId, upTo, snapshot.final, options);
  return {
    state: snapshot.state,
    stdout: sliceStream(snapshot.stdout, stdout, from.stdout, upTo.stdout),
    stderr: sliceStream(snapshot.stderr, stderr, from.stderr, upTo.stderr),
    host: snapshot.host,
    unclaimed: !claimed,
    ...(snapshot.limits ? { limits: snapshot.limits } : {}),
  };
}

/**
 * How far a read of `snapshot` may take each stream: all of a finished task's output; of a running
 * one's, not the bytes of an unfinished character, and with `wholeLines` (a filtered read) not an
 * unfinished line either, which a later read then sees (and filters) whole. A line longer than the
 * tail held is taken as it is.
 */
export function readableUpTo(
  snapshot: TaskSnapshot,
  wholeLines: boolean,
  tails = { stdout: tailBytes(snapshot.stdout), stderr: tailBytes(snapshot.stderr) },
): ReadPosition {
  const readTo = (stream: StreamTail, tail: Buffer) => {
    if (snapshot.final) return stream.bytes;
    const tailStart = stream.bytes - tail.length;
    if (wholeLines) {
      const lastNewline = tail.lastIndexOf(0x0a);
      if (lastNewline >= 0) return tailStart + lastNewline + 1;
      // No line ends in what is held: all of it is one unfinished line, unless it began before.
      if (tailStart === 0) return 0;
    }
    return stream.bytes - unfinishedCharLength(tail);
  };
  return { stdout: readTo(snapshot.stdout, tails.stdout), stderr: readTo(snapshot.stderr, tails.stderr) };
}

/** The bytes `[from, upTo)` of a stream whose tail holds its last `tail.length` bytes. */
export function sliceStream(stream: StreamTail, tail: Buffer, from: number, upTo: number): StreamRead {
  const { bytes, droppedBytes, cutAtStart } = heldBytes(stream, tail, from, upTo);
  const text = decodeText(bytes, cutAtStart);
  return { text, droppedBytes, ...(stream.spillPath !== undefined ? { spillPath: stream.spillPath } : {}) };
}

/**
 * Claims the bytes before `upTo` in the task's reader workflow, starting it if needed (from the
 * memo a closed reader left). When no worker answers within CLAIM_WAIT_MS, the reader's memo says
 * whether the claim applied after all; if not, the read is unclaimed and shows what lies past the
 * memo's position without moving it. Expiries keep a claim from applying after that check.
 */
async function claim(
  client: Client,
  taskId: string,
  upTo: ReadPosition,
  taskEnded: boolean,
  options: ReaderOptions,
): Promise<{ from: ReadPosition; claimed: boolean }> {
  const deadline = Date.now() + CLAIM_WAIT_MS;
  const claimIds: string[] = [];
  let resumeFrom: ReaderMemo | undefined;
  for (let attempt = 0; attempt < 3 && deadline - Date.now() > CLAIM_MARGIN_MS; attempt++) {
    const claimId = randomUUID();
    claimIds.push(claimId);
    const request: ClaimRequest = {
      claimId,
      upTo,
      taskEnded,
      // On the server's clock, and before this reader gives up: a claim must never apply unseen.
      expiresAtMs: serverNow(client) + Math.min(CLAIM_EXPIRY_MS, deadline - Date.now() - CLAIM_MARGIN_MS),
    };
    try {
      const result = await client.withDeadline(deadline, () =>
        client.workflow.executeUpdateWithStart(claimUpdate, {
          updateId: claimId,
          args: [request],
          startWorkflowOperation: readerStart(taskId, resumeFrom, taskEnded, options),
        }),
      );
      // A reader run of the first version answers with the bare position.
      if (typeof result.serverTimeMs !== 'number')
        return { from: result as unknown as ReadPosition, claimed: true };
      learnServerTime(client, result.serverTimeMs);
      return { from: result.before, claimed: true };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        // Refused as expired: this host's clock is behind the server's. Learn by how much, retry.
        const serverTimeMs = refusedAtServerTime(err, CLAIM_EXPIRED);
        if (serverTimeMs === undefined) throw err;
        learnServerTime(client, serverTimeMs);
        continue;
      }
      // A reader closed (idle end) or closing (continue-as-new) under us: start from its memo.
      if (err instanceof WorkflowExecutionAlreadyStartedError || err instanceof WorkflowNotFoundError) {
        resumeFrom = await readerMemo(client, taskId);
        continue;
      }
      // Any other failure (a deadline, a cancelled or failed call) may have come after the claim
      // applied: the memo below says.
      break;
    }
  }
  const memo = await readerMemo(client, taskId);
  const applied = memo.recentClaims.find((recent) => claimIds.includes(recent.claimId));
  return applied ? { from: applied.before, claimed: true } : { from: memo.position, claimed: false };
}

function readerStart(
  taskId: string,
  resumeFrom: ReaderMemo | undefined,
  taskEnded: boolean,
  options: ReaderOptions,
): WithStartWorkflowOperation<typeof bashOutputReader> {
  const memo: ReaderMemo = resumeFrom ?? { position: START_OF_OUTPUT, recentClaims: [] };
  return new WithStartWorkflowOperation(bashOutputReader, {
    workflowId: outputReaderId(taskId),
    taskQueue: options.taskQueue,
    args: [
      {
        taskId,
        position: memo.position,
        recentClaims: memo.recentClaims,
        taskEnded,
        claimsPerRun: options.claimsPerRun ?? READER_CLAIMS_PER_RUN,
        idleMs: options.idleMs ?? READER_IDLE_MS,
        ...(options.probeIntervalMs !== undefined ? { probeIntervalMs: options.probeIntervalMs } : {}),
      },
    ],
    memo: { ...memo },
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    // A first reader starts from zero; after a reader closed, only a start from its memo may follow.
    workflowIdReusePolicy:
      resumeFrom === undefined
        ? WorkflowIdReusePolicy.REJECT_DUPLICATE
        : WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/**
 * Where a task's next read starts, as the server holds it (the reader's memo): readable with no
 * worker; the start of output when the task was never read.
 */
export async function readPosition(client: Client, taskId: string): Promise<ReadPosition> {
  return (await readerMemo(client, taskId)).position;
}

/** A task's reader memo, readable with no worker; the start of output when there is no reader. */
async function readerMemo(client: Client, taskId: string): Promise<ReaderMemo> {
  try {
    const description = await client.workflow.getHandle(outputReaderId(taskId)).describe();
    const memo = (description.memo ?? {}) as Partial<ReaderMemo>;
    return {
      position: { stdout: memo.position?.stdout ?? 0, stderr: memo.position?.stderr ?? 0 },
      recentClaims: Array.isArray(memo.recentClaims) ? memo.recentClaims : [],
    };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { position: START_OF_OUTPUT, recentClaims: [] };
    throw err;
  }
}
