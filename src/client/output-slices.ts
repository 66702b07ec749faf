/**
 * Reads from what the server holds of a task's output: the tails in its last heartbeat or its
 * result. Used when no worker on the task's host answers, and for an ended task, whose result holds
 * everything a read may still show.
 */
import type {
  OutputRead,
  ReadPosition,
  StreamRead,
  TerminalRead,
  TerminalReadMode,
} from '../shared/read-position.js';
import { decodeText, heldBytes, readableEnd, tailBytes } from '../shared/stream-text.js';
import type { StreamTail, TerminalEnd } from '../shared/task.js';
import type { TaskSnapshot } from './task-snapshot.js';

/**
 * An ended terminal task's read, from its result: the last screen, and for a scrollback read the
 * lines that scrolled off (all its result holds, when the read position was short of the end).
 */
export function endedTerminalRead(end: TerminalEnd, mode: TerminalReadMode, unread: boolean): TerminalRead {
  if (mode !== 'scrollback') return { screen: end.screen };
  const lines = unread && end.scrolledOff !== '' ? end.scrolledOff.split('\n') : [];
  return { screen: end.screen, scrolledOff: { lines, missing: unread ? end.scrolledOffDropped : 0 } };
}

/**
 * What a read shows when no worker on the task's host answered: the output past `from` that the
 * server holds (the command's last heartbeat), with the read position left where it is.
 */
export function unclaimedRead(snapshot: TaskSnapshot, from: ReadPosition, wholeLines = false): OutputRead {
  const stdout = tailBytes(snapshot.stdout);
  const stderr = tailBytes(snapshot.stderr);
  const upTo = readableUpTo(snapshot, wholeLines, { stdout, stderr });
  return {
    state: snapshot.state,
    stdout: sliceStream(snapshot.stdout, stdout, from.stdout, Math.max(from.stdout, upTo.stdout)),
    stderr: sliceStream(snapshot.stderr, stderr, from.stderr, Math.max(from.stderr, upTo.stderr)),
    host: snapshot.host,
    unclaimed: true,
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
  // The tail held is all the server has: an unfinished line is one only when the tail holds its start.
  const readTo = (stream: StreamTail, tail: Buffer) =>
    snapshot.final ? stream.bytes : readableEnd(tail, stream.bytes - tail.length, 0, wholeLines);
  return { stdout: readTo(snapshot.stdout, tails.stdout), stderr: readTo(snapshot.stderr, tails.stderr) };
}

/** The bytes `[from, upTo)` of a stream whose tail holds its last `tail.length` bytes. */
export function sliceStream(stream: StreamTail, tail: Buffer, from: number, upTo: number): StreamRead {
  const { bytes, droppedBytes, cutAtStart } = heldBytes(stream, tail, from, upTo);
  const text = decodeText(bytes, cutAtStart);
  return { text, droppedBytes, ...(stream.spillPath !== undefined ? { spillPath: stream.spillPath } : {}) };
}
