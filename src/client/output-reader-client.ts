/**
 * The client side of a task's output reader workflow (workflows/output-reader.ts), which owns the
 * durable read position: claims that move the position past what a read shows (from the server's
 * tails, output-slices.ts), reads on the command's host that the reader runs and applies
 * (`readOnHost`), and the position as it stands.
 */
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
import { HOST_READ_START_MS, READER_CLAIMS_PER_RUN, READER_IDLE_MS } from '../shared/limits.js';
import {
  CLAIM_EXPIRED,
  type ClaimRequest,
  type ClaimResult,
  type HostReadClaim,
  type HostReadResult,
  type OutputRead,
  outputReaderId,
  positionOn,
  type ReaderMemo,
  type ReadPosition,
  START_OF_OUTPUT,
  type TerminalReadMode,
} from '../shared/read-position.js';
import { tailBytes } from '../shared/stream-text.js';
import { bashOutputReader, claimUpdate, readUpdate } from '../workflows/output-reader.js';
import { abandonReadSignal } from '../workflows/reader-signals.js';
import { endedTerminalRead, readableUpTo, sliceStream } from './output-slices.js';
import { readerHistory, readerState } from './reader-history.js';
import { learnServerTime, refusedAtServerTime, serverNow } from './server-clock.js';
import type { TaskSnapshot } from './task-snapshot.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';
import { untilDeadline } from './until-deadline.js';
import { waitOutWorkflowTaskStartedBy } from './workflow-task-in-flight.js';

/** How long a read waits for a worker to take its claim before it answers with what the server holds. */
const CLAIM_WAIT_MS = 4_000;

/** How long a claim stays valid on the server's clock; never past the reader's own wait. */
const CLAIM_EXPIRY_MS = 2_500;

/** Time kept between a claim's expiry and the reader's giving up, for the workflow task in flight. */
const CLAIM_MARGIN_MS = 1_000;

export type { OutputRead, StreamRead } from '../shared/read-position.js';

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
  terminalMode: TerminalReadMode = 'screen',
): Promise<OutputRead> {
  const stdout = tailBytes(snapshot.stdout);
  const stderr = tailBytes(snapshot.stderr);
  const upTo = readableUpTo(snapshot, wholeLines, { stdout, stderr });
  const { from, claimed } = await claim(client, snapshot, upTo, options);
  const terminal =
    snapshot.terminal && terminalMode !== 'raw'
      ? endedTerminalRead(snapshot.terminal, terminalMode, from.stdout < upTo.stdout)
      : undefined;
  return {
    ...(terminal ? { terminal } : {}),
    state: snapshot.state,
    stdout: sliceStream(snapshot.stdout, stdout, from.stdout, upTo.stdout),
    stderr: sliceStream(snapshot.stderr, stderr, from.stderr, upTo.stderr),
    host: snapshot.host,
    unclaimed: !claimed,
    ...(snapshot.limits ? { limits: snapshot.limits } : {}),
    ...(claimed ? { ranges: rangesOf(from, upTo) } : {}),
  };
}

/** The ranges a read moved the position over, from where it stood to where the read took it. */
export function rangesOf(before: ReadPosition, upTo: ReadPosition): NonNullable<OutputRead['ranges']> {
  return {
    stdout: { from: before.stdout, upTo: Math.max(before.stdout, upTo.stdout) },
    stderr: { from: before.stderr, upTo: Math.max(before.stderr, upTo.stderr) },
  };
}

/**
 * Claims the bytes before `upTo` in the task's reader workflow, starting it if needed (from where
 * a closed reader left the position). When no worker answers within CLAIM_WAIT_MS, the reader's
 * history says whether the claim applied after all; if not, the read is unclaimed and shows what
 * lies past the position without moving it. Expiries keep a claim from applying after that check:
 * the reader refuses one its workflow task took after the expiry, and a task that took one before
 * is waited out (completed, failed or timed out) before the history is read.
 */
async function claim(
  client: Client,
  snapshot: Pick<TaskSnapshot, 'taskId' | 'final' | 'hostQueue'>,
  upTo: ReadPosition,
  options: ReaderOptions,
): Promise<{ from: ReadPosition; claimed: boolean }> {
  const { taskId, final: taskEnded, hostQueue } = snapshot;
  const deadline = Date.now() + CLAIM_WAIT_MS;
  let latestExpiryMs: number | undefined;
  const sent = await sendToReader(client, taskId, options, {
    deadline,
    margin: CLAIM_MARGIN_MS,
    taskEnded,
    send: (claimId, startWorkflowOperation) => {
      // On the server's clock, and before this reader gives up: a claim must never apply unseen.
      const expiresAtMs =
        serverNow(client) + Math.min(CLAIM_EXPIRY_MS, deadline - Date.now() - CLAIM_MARGIN_MS);
      latestExpiryMs = Math.max(latestExpiryMs ?? expiresAtMs, expiresAtMs);
      const request: ClaimRequest = {
        claimId,
        taskId,
        upTo,
        taskEnded,
        ...(hostQueue !== undefined ? { hostQueue } : {}),
        expiresAtMs,
      };
      return untilDeadline(deadline, undefined, (stop) =>
        client.withAbortSignal(stop, () =>
          client.workflow.executeUpdateWithStart(claimUpdate, {
            updateId: claimId,
            args: [request],
            startWorkflowOperation,
          }),
        ),
      );
    },
  });
  if (sent.answer !== undefined) {
    // A reader run of the first version answers with the bare position.
    const answer = sent.answer as ClaimResult | ReadPosition;
    return { from: 'before' in answer ? answer.before : answer, claimed: true };
  }
  // A workflow task that took a claim before its expiry applies it whenever it completes: wait it out.
  if (latestExpiryMs !== undefined)
    await waitOutWorkflowTaskStartedBy(client, outputReaderId(taskId), latestExpiryMs);
  const state = await readerState(client, taskId);
  const applied = state.recentClaims.find((recent) => sent.claimIds.includes(recent.claimId));
  return applied ? { from: applied.before, claimed: true } : { from: state.position, claimed: false };
}

/**
 * Sends one update to a task's reader workflow by update-with-start (starting the reader, from where
 * a closed one left the position, when needed), each try with a fresh id, while the deadline leaves more
 * than `margin`: up to three tries, and up to CLOCK_REFUSALS_MAX more for refusals for this host's
 * clock. Such a refusal teaches it the server's time and is sent again; a reader that closed under
 * it is started again from its position. The answer, or none when the call failed another way (a
 * deadline, a cancelled call), which may have come after the update applied: the caller then asks
 * the reader's history, with every id tried.
 */
async function sendToReader<R extends { serverTimeMs?: number }>(
  client: Client,
  taskId: string,
  options: ReaderOptions,
  how: {
    deadline: number;
    margin: number;
    taskEnded: boolean;
    send: (claimId: string, start: WithStartWorkflowOperation<typeof bashOutputReader>) => Promise<R>;
    /** Called when a try fails, before anything else: may throw to end the tries. */
    onFailure?: (claimId: string) => Promise<void>;
  },
): Promise<{ answer?: R; claimIds: string[] }> {
  const claimIds: string[] = [];
  let resumeFrom: ReaderMemo | undefined;
  let clockRefusals = 0;
  for (let attempt = 0; attempt < 3 && how.deadline - Date.now() > how.margin; attempt++) {
    const claimId = randomUUID();
    claimIds.push(claimId);
    let answer: R;
    try {
      answer = await how.send(claimId, readerStart(taskId, resumeFrom, how.taskEnded, options));
    } catch (err) {
      await how.onFailure?.(claimId);
      if (err instanceof WorkflowUpdateFailedError) {
        // Refused as too late: this host's clock is behind the server's. Learn by how much, retry.
        const serverTimeMs = refusedAtServerTime(err, CLAIM_EXPIRED);
        if (serverTimeMs === undefined) throw err;
        learnServerTime(client, serverTimeMs);
        if (clockRefusals++ < CLOCK_REFUSALS_MAX) attempt--;
        continue;
      }
      // A reader closed (idle end) or closing (continue-as-new) under us: start from its position.
      if (err instanceof WorkflowExecutionAlreadyStartedError || err instanceof WorkflowNotFoundError) {
        resumeFrom = await readerState(client, taskId);
        continue;
      }
      break;
    }
    refuseUnencrypted(answer, `task ${taskId}`, "reader's answer");
    if (typeof answer.serverTimeMs === 'number') learnServerTime(client, answer.serverTimeMs);
    return { answer, claimIds };
  }
  return { claimIds };
}

/**
 * Refusals for the caller's clock a send takes beyond its three tries. A real server's clock
 * refuses once (the next try carries the learned time); a time-skipping test server's clock, free
 * while the test lets it run, can jump to the next timer while each update waits for its workflow
 * task, again and again under load.
 */
const CLOCK_REFUSALS_MAX = 10;

/** Time a host read's caller waits past the host's pick-up and the read's own wait, for the answer to come back. */
const HOST_READ_ANSWER_MS = 2_000;

/**
 * Time a host read's caller allows the reader's own workflow task to start. Without it the reader
 * had half a second: a worker that had just started (its first workflow task builds the workflow
 * sandbox and replays the reader) took longer under load, and the reader answered too late to read.
 */
const READER_TASK_START_MS = 1_500;

/** Time between the caller's giving up and the claim's `answerByMs`: an answer the reader sends must arrive. */
const HOST_READ_MARGIN_MS = 1_000;

/** How long a read that got no answer asks for the answer of a read its reader took after all. */
const LOST_ANSWER_WAIT_MS = 1_000;

export interface HostReadOptions {
  /** How long the host may wait for new output. */
  waitMs: number;
  wholeLines: boolean;
  /** A peek: read from here, and leave the read position alone. */
  peekFrom?: ReadPosition;
  /** How a terminal task's read answers. @default 'screen' */
  terminal?: TerminalReadMode;
  /** Aborts the read: a read the reader had not answered yet then moves nothing. */
  signal?: AbortSignal;
}

/** Thrown by `readOnHost` when its signal aborted it. */
export class HostReadAborted extends Error {}

/**
 * Reads a running task's new output on its host, through the task's reader workflow (started if
 * needed): the reader runs the read on `hostQueue` and moves the read position past what it returns.
 * Undefined when no answer came in time (no worker runs the reader, or the server is slow) and the
 * read did not apply; the caller then answers with what the server holds.
 */
export async function readOnHost(
  client: Client,
  taskId: string,
  hostQueue: string,
  request: HostReadOptions,
  options: ReaderOptions,
): Promise<HostReadResult | undefined> {
  const deadline =
    Date.now() + READER_TASK_START_MS + HOST_READ_START_MS + request.waitMs + HOST_READ_ANSWER_MS;
  const sent = await sendToReader(client, taskId, options, {
    deadline,
    margin: HOST_READ_START_MS,
    taskEnded: false,
    send: (claimId, startWorkflowOperation) => {
      const claim: HostReadClaim = {
        claimId,
        taskId,
        hostQueue,
        waitMs: request.waitMs,
        wholeLines: request.wholeLines,
        answerByMs: serverNow(client) + (deadline - Date.now()) - HOST_READ_MARGIN_MS,
        ...(request.peekFrom ? { peekFrom: request.peekFrom } : {}),
        ...(request.terminal ? { terminal: request.terminal } : {}),
      };
      return untilDeadline(deadline, request.signal, (stop) =>
        client.withAbortSignal(stop, () =>
          client.workflow.executeUpdateWithStart(readUpdate, {
            updateId: claimId,
            args: [claim],
            startWorkflowOperation,
          }),
        ),
      );
    },
    onFailure: async (claimId) => {
      if (!request.signal?.aborted) return;
      // The reader may have taken the read: it must not move the position for a caller that left.
      await client.workflow
        .getHandle(outputReaderId(taskId))
        .signal(abandonReadSignal, claimId)
        .catch(() => undefined);
      throw new HostReadAborted(`the read of task ${taskId} was aborted`);
    },
  });
  if (sent.answer !== undefined) return sent.answer;
  // No answer: a read the reader took after all has its answer in the reader's history.
  const { state, acceptedUpdateIds } = await readerHistory(client, taskId);
  const applied = state.recentClaims.find((recent) => sent.claimIds.includes(recent.claimId));
  // Or accepted but not answered yet (its workflow task outlived the deadline: a server restart
  // under it): the reader will move the position when it answers, so that answer is awaited longer.
  // (A read accepted in time is one it will answer; one it did not accept, it refuses later, its
  // answer-by time having passed.)
  const taken = applied?.claimId ?? sent.claimIds.find((claimId) => acceptedUpdateIds.has(claimId));
  if (taken === undefined) return undefined;
  const handle = client.workflow.getHandle(outputReaderId(taskId));
  return client
    .withDeadline(Date.now() + (applied ? LOST_ANSWER_WAIT_MS : ACCEPTED_READ_WAIT_MS), () =>
      handle.getUpdateHandle<HostReadResult>(taken).result(),
    )
    .catch(() => ({
      // Taken, but its answer is out of reach: its bytes were read and cannot be shown again.
      kind: 'late' as const,
      position: state.position,
      serverTimeMs: serverNow(client),
    }))
    .then((answer) => refuseUnencrypted(answer, `task ${taskId}`, "reader's answer"));
}

/** How long a read the reader accepted, but had not answered by the deadline, is waited for. */
const ACCEPTED_READ_WAIT_MS = 30_000;

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
        ...(memo.host !== undefined ? { host: memo.host } : {}),
        claimsPerRun: options.claimsPerRun ?? READER_CLAIMS_PER_RUN,
        idleMs: options.idleMs ?? READER_IDLE_MS,
        ...(options.probeIntervalMs !== undefined ? { probeIntervalMs: options.probeIntervalMs } : {}),
      },
    ],
    memo: { ...memo },
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    // A first reader starts from zero; after a reader closed, only a start from its position may follow.
    workflowIdReusePolicy:
      resumeFrom === undefined
        ? WorkflowIdReusePolicy.REJECT_DUPLICATE
        : WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/**
 * Where a task's next read starts, as the server holds it (the reader's history): readable with no
 * worker; the start of output when the task was never read.
 */
export async function readPosition(
  client: Client,
  taskId: string,
  hostQueue?: string,
): Promise<ReadPosition> {
  return positionOn(await readerState(client, taskId), hostQueue);
}
