/**
 * What a spawned process's stream still owes its consumer, in order: bytes a durable read brought,
 * or ranges of the task's spill file to read raw (`BashTasks.outputRange`). Pure: the handle
 * (durable-bash-process.ts) makes the reads and the ranged reads.
 */
import type { ReadRange, StreamRead } from '../shared/read-position.js';

/** A part of a stream not yet given to its consumer: bytes held, or `[start, end)` of the spill file. */
export type Segment = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'range'; start: number; end: number };

const encoder = new TextEncoder();

/**
 * The bytes a read's text is, when they are exactly the last bytes of its range: valid UTF-8 (no
 * U+FFFD, which may stand for invalid bytes) whose length and the bytes it left out make the range.
 */
export function exactTail(part: StreamRead, range: ReadRange): Uint8Array | undefined {
  if (part.text.includes('\uFFFD')) return undefined;
  const bytes = encoder.encode(part.text);
  return bytes.length + part.droppedBytes === range.upTo - range.from ? bytes : undefined;
}

/**
 * What a durable read adds to a stream whose segments end at byte `planned`: what lies between
 * `planned` and the read's range (bytes skipped: a read another holder of the handle made, or a
 * `bash_output` call), and the bytes the read left out or could not give exactly, as ranges to read
 * raw; its text as bytes when exact and `holdText` (the stream holds nothing else, so a handle holds
 * at most one read's text per stream). Nothing for bytes before `planned`.
 */
export function segmentsOfRead(
  planned: number,
  range: ReadRange,
  part: StreamRead,
  holdText: boolean,
): Segment[] {
  if (range.upTo <= planned) return [];
  const tail = holdText ? exactTail(part, range) : undefined;
  const textFrom = tail ? Math.max(planned, range.upTo - tail.length) : range.upTo;
  const segments: Segment[] = [];
  if (textFrom > planned) segments.push({ kind: 'range', start: planned, end: textFrom });
  if (tail && range.upTo > textFrom)
    segments.push({ kind: 'bytes', bytes: tail.subarray(tail.length - (range.upTo - textFrom)) });
  return segments;
}

/** Where `segments`, starting at byte `delivered`, end. */
export function plannedEnd(delivered: number, segments: readonly Segment[]): number {
  let end = delivered;
  for (const segment of segments) end = segment.kind === 'range' ? segment.end : end + segment.bytes.length;
  return end;
}

/** Appends `added` to `segments`, joining a range to a range it continues. */
export function appendSegments(segments: Segment[], added: readonly Segment[]): void {
  for (const segment of added) {
    const last = segments.at(-1);
    if (last?.kind === 'range' && segment.kind === 'range' && last.end === segment.start)
      last.end = segment.end;
    else segments.push(segment);
  }
}
