/**
 * A task's read position as the server holds it, for a client with no worker to ask: the reader's
 * latest run, from the position it started at (its input) through every claim and read it answered,
 * applied as the reader applies them (workflows/output-reader.ts). The reader no longer writes its
 * memo on every move (one action a read), so its history is where the position is; runs recorded
 * before that hold the same updates, so the same fold reads them.
 */
import { type Client, isGrpcServiceError, type Payload } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import {
  type ClaimRequest,
  type ClaimResult,
  type HostReadClaim,
  type HostReadResult,
  type OutputReaderInput,
  outputReaderId,
  positionOn,
  RECENT_CLAIMS_KEPT,
  type ReaderMemo,
  type ReadPosition,
  START_OF_OUTPUT,
} from '../shared/read-position.js';
import { claimUpdate, readUpdate } from '../workflows/output-reader.js';
import { decodePayload } from './decode-payload.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';

/** gRPC's NOT_FOUND: the task was never read (no reader), or its reader is past retention. */
const GRPC_NOT_FOUND = 5;

/** What the reader's latest run holds: its state, and every update it accepted (answered or not yet). */
export interface ReaderHistory {
  state: ReaderMemo;
  acceptedUpdateIds: ReadonlySet<string>;
}

/** The reader's position, its latest claims and whether a read showed the end; the start of output when there is no reader. */
export async function readerState(client: Client, taskId: string): Promise<ReaderMemo> {
  return (await readerHistory(client, taskId)).state;
}

/** The reader's latest run, read from its history; an empty one when there is no reader. */
export async function readerHistory(client: Client, taskId: string): Promise<ReaderHistory> {
  let history: temporal.api.history.v1.IHistory;
  try {
    history = await client.workflow.getHandle(outputReaderId(taskId)).fetchHistory();
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND)
      return { state: { position: START_OF_OUTPUT, recentClaims: [] }, acceptedUpdateIds: new Set() };
    throw err;
  }
  return foldReaderHistory(history.events ?? [], async (payload) =>
    refuseUnencrypted(await decodePayload(client, payload), `task ${taskId}`, 'read position'),
  );
}

/** Turns a payload of the history into its value, as the client's data converter does. */
export type PayloadDecoder = (payload: Payload) => Promise<unknown>;

/** Applies a reader run's answered updates to the position its run started from. */
export async function foldReaderHistory(
  events: temporal.api.history.v1.IHistoryEvent[],
  decodePayloadOf: PayloadDecoder,
): Promise<ReaderHistory> {
  const decode = async <T>(payload: Payload | null | undefined): Promise<T | undefined> =>
    payload ? ((await decodePayloadOf(payload)) as T) : undefined;
  let position: ReadPosition = START_OF_OUTPUT;
  let host: string | undefined;
  let recentClaims: ReaderMemo['recentClaims'] = [];
  let endShown = false;
  const requests = new Map<string, { name: string; payload: Payload | null | undefined }>();
  const applied = (claimId: string, before: ReadPosition, upTo: ReadPosition, hostQueue?: string) => {
    const from = positionOn({ position, ...(host !== undefined ? { host } : {}) }, hostQueue);
    position = {
      stdout: Math.max(from.stdout, upTo.stdout),
      stderr: Math.max(from.stderr, upTo.stderr),
    };
    host = hostQueue ?? host;
    recentClaims = [...recentClaims, { claimId, before }].slice(-RECENT_CLAIMS_KEPT);
  };
  for (const event of events) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started) {
      const input = await decode<OutputReaderInput>(started.input?.payloads?.[0]);
      position = input?.position ?? START_OF_OUTPUT;
      host = input?.host;
      recentClaims = input?.recentClaims ?? [];
      endShown = (await decode<boolean>(started.memo?.fields?.endShown)) === true;
      continue;
    }
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (accepted?.meta?.updateId) {
      requests.set(accepted.meta.updateId, {
        name: accepted.input?.name ?? '',
        payload: accepted.input?.args?.payloads?.[0],
      });
      continue;
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    const request = completed?.meta?.updateId ? requests.get(completed.meta.updateId) : undefined;
    const answer = completed?.outcome?.success?.payloads?.[0];
    if (request === undefined || !answer) continue;
    if (request.name === claimUpdate.name) {
      const claim = await decode<ClaimRequest>(request.payload);
      const result = await decode<ClaimResult | ReadPosition>(answer);
      if (claim === undefined || result === undefined) continue;
      // A reader run of the first version answered with the bare position.
      applied(claim.claimId, 'before' in result ? result.before : result, claim.upTo, claim.hostQueue);
      if (claim.taskEnded) endShown = true;
    } else if (request.name === readUpdate.name) {
      const read = await decode<HostReadClaim>(request.payload);
      const result = await decode<HostReadResult>(answer);
      // A peek leaves the position; a late or unavailable host read moved nothing.
      if (read === undefined || read.peekFrom !== undefined || result?.kind !== 'read') continue;
      applied(read.claimId, result.before, result.read.upTo, read.hostQueue);
    }
  }
  return {
    state: {
      position,
      recentClaims,
      ...(endShown ? { endShown: true } : {}),
      ...(host !== undefined ? { host } : {}),
    },
    acceptedUpdateIds: new Set(requests.keys()),
  };
}
