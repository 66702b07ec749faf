/**
 * Output slicing under hostile bytes: the pure functions that cut a stream's held tail into reads
 * (`sliceStream`, `heldBytes`, `unfinishedCharLength`, `decodeText`, `tailText`) and render them.
 * A simulated task writes a stream; readers take snapshots as it grows (the server holding its whole
 * output, or only a bounded tail as heartbeats do) and claim up to each snapshot as `readNewOutput`
 * does; the reader workflow moves its position to the largest claim.
 */
import { fc, it } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { sliceStream } from '../../src/client/output-slices.js';
import { HEARTBEAT_TAIL_BYTES } from '../../src/shared/limits.js';
import { renderRun } from '../../src/shared/render.js';
import { heldBytes, tailBytes, tailText, unfinishedCharLength } from '../../src/shared/stream-text.js';
import type { StreamTail } from '../../src/shared/task.js';
import { renderOutputRead } from '../../src/tools/render-read.js';
import { runs } from './arbitraries.js';

/** One character, most of them multibyte, some of them NUL or line breaks. */
const char = fc.oneof(
  fc.constantFrom('a', '\n', '\0', 'é', '€', '😀', '\u0800', '\uFFFF', '\uFFFD', '\r\n'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

/** Byte runs that are not UTF-8: stray continuations, cut and overlong sequences, encoded surrogates. */
const brokenUtf8 = fc.oneof(
  fc.constantFrom(
    [0x80],
    [0xbf],
    [0xc0, 0x80],
    [0xc1, 0xbf],
    [0xc3],
    [0xe2, 0x82],
    [0xe0, 0x80, 0x80],
    [0xf0, 0x9f, 0x98],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
    [0xfe],
    [0xff],
  ),
  fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 5 }),
);

/** A long line of one character, up to 100,000 of them with no newline. */
const longLine = fc
  .tuple(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom('x', '€', '😀', '\0'))
  .map(([count, c]) => c.repeat(count));

/** A stream of valid UTF-8. */
const validStream = fc.oneof(
  { weight: 4, arbitrary: fc.array(char, { maxLength: 80 }).map((chars) => Buffer.from(chars.join(''))) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.oneof(longLine, char), { maxLength: 3 })
      .map((parts) => Buffer.from(parts.join(''))),
  },
);

/** A stream of any bytes: random, or UTF-8 with broken sequences spliced in. */
const anyStream = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc
    .array(
      fc.oneof(
        char.map((c) => [...Buffer.from(c)]),
        brokenUtf8,
      ),
      { maxLength: 60 },
    )
    .map((parts) => Buffer.from(parts.flat())),
  validStream,
);

/** Where readers take their snapshots, as fractions of the stream (the last read comes after the end). */
const snapshots = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 });

/**
 * How much of the stream the server holds: all of it, a tiny tail, or the heartbeat's tail. A
 * running task's tail is HEARTBEAT_TAIL_BYTES; `minimum` 4 keeps it as long as the longest character,
 * below which a read cannot see whether the tail ends inside one.
 */
const heldLimit = (minimum: number) =>
  fc.oneof(
    fc.constant(Number.POSITIVE_INFINITY),
    fc.integer({ min: minimum, max: 64 }),
    fc.constant(HEARTBEAT_TAIL_BYTES),
  );

interface Read {
  from: number;
  upTo: number;
  text: string;
  droppedBytes: number;
  /** The raw bytes the read was given (before decoding). */
  bytes: Buffer;
  tailStart: number;
}

/** Reads `stream` as it grows, at each snapshot and once after its end, as `readNewOutput` does. */
function readAll(stream: Buffer, fractions: number[], limit: number): Read[] {
  const points = [
    ...fractions.map((f) => Math.floor(f * stream.length)).sort((a, b) => a - b),
    stream.length,
  ];
  const reads: Read[] = [];
  let position = 0;
  points.forEach((length, index) => {
    const final = index === points.length - 1;
    const held = stream.subarray(Math.max(0, length - limit), length);
    const tail: StreamTail = { bytes: length, tailBase64: held.toString('base64') };
    const bytes = tailBytes(tail);
    const upTo = length - (final ? 0 : unfinishedCharLength(bytes));
    const read = sliceStream(tail, bytes, position, upTo);
    const raw = heldBytes(tail, bytes, position, upTo);
    reads.push({
      from: position,
      upTo,
      text: read.text,
      droppedBytes: read.droppedBytes,
      bytes: raw.bytes,
      tailStart: length - bytes.length,
    });
    position = Math.max(position, upTo);
  });
  return reads;
}

const replacements = (text: string) => text.split('\uFFFD').length - 1;

describe('output slicing (fuzzed)', () => {
  it.prop([anyStream, snapshots], runs(300))(
    'gives every byte exactly once, in order, and decodes the reads to exactly the decoded whole',
    (stream, fractions) => {
      const reads = readAll(stream, fractions, Number.POSITIVE_INFINITY);
      expect(Buffer.concat(reads.map((read) => read.bytes)).equals(stream)).toBe(true);
      expect(reads.every((read) => read.droppedBytes === 0)).toBe(true);
      expect(reads.map((read) => read.text).join('')).toBe(stream.toString('utf8'));
    },
  );

  it.prop([validStream, snapshots], runs(300))(
    'never splits a character of valid UTF-8: no U+FFFD appears at a read boundary',
    (stream, fractions) => {
      const reads = readAll(stream, fractions, Number.POSITIVE_INFINITY);
      for (const read of reads) expect(Buffer.from(read.text).equals(read.bytes)).toBe(true);
      expect(replacements(reads.map((read) => read.text).join(''))).toBe(
        replacements(stream.toString('utf8')),
      );
    },
  );

  it.prop([anyStream, snapshots, heldLimit(1)], runs(300))(
    'accounts for every byte as shown or dropped when the server holds only a tail',
    (stream, fractions, limit) => {
      const reads = readAll(stream, fractions, limit);
      let accounted = 0;
      for (const read of reads) {
        const wanted = Math.max(0, read.upTo - read.from);
        expect(read.droppedBytes + read.bytes.length).toBe(wanted);
        expect(read.droppedBytes).toBe(Math.max(0, Math.min(read.tailStart, read.upTo) - read.from));
        expect(
          read.bytes.equals(stream.subarray(read.upTo - read.bytes.length, Math.max(read.upTo, read.from))),
        ).toBe(true);
        accounted += wanted;
      }
      expect(accounted).toBe(stream.length);
    },
  );

  it.prop([validStream, snapshots, heldLimit(4)], runs(300))(
    'shows only whole characters of valid UTF-8 even when a read starts inside a dropped one',
    (stream, fractions, limit) => {
      for (const read of readAll(stream, fractions, limit)) {
        // The text re-encodes to the bytes given, less at most the three continuation bytes of a
        // character whose start was dropped: so no character was split and no U+FFFD added.
        const shown = Buffer.from(read.text);
        const skipped = read.bytes.length - shown.length;
        expect(skipped).toBeGreaterThanOrEqual(0);
        expect(skipped).toBeLessThanOrEqual(read.droppedBytes > 0 ? 3 : 0);
        expect(shown.equals(read.bytes.subarray(skipped))).toBe(true);
      }
    },
  );

  it.prop([validStream, fc.integer({ min: 0, max: 100 })], runs(300))(
    'cuts a result tail on a character boundary, so it is a suffix of the whole with no U+FFFD added',
    (stream, limit) => {
      const held = stream.subarray(Math.max(0, stream.length - limit));
      const text = tailText({ bytes: stream.length, tailBase64: held.toString('base64') });
      const shown = Buffer.from(text);
      expect(stream.toString('utf8').endsWith(text)).toBe(true);
      expect(shown.length).toBeGreaterThanOrEqual(held.length - (held.length < stream.length ? 3 : 0));
      expect(shown.equals(held.subarray(held.length - shown.length))).toBe(true);
    },
  );

  it.prop(
    [anyStream, anyStream, fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 })],
    runs(200),
  )('renders any bytes, with any totals, without throwing', (stdout, stderr, extraOut, extraErr) => {
    const tail = (bytes: Buffer, extra: number): StreamTail => ({
      bytes: bytes.length + extra,
      tailBase64: bytes.toString('base64'),
      ...(extra > 0 ? { spillPath: '/spill/x' } : {}),
    });
    const run = renderRun(
      {
        exitCode: 0,
        signal: null,
        stdout: tail(stdout, extraOut),
        stderr: tail(stderr, extraErr),
        host: 'h',
      },
      'h',
    );
    expect(typeof run).toBe('string');
    const read = renderOutputRead(
      {
        state: { status: 'running' },
        stdout: sliceStream(tail(stdout, extraOut), stdout, 0, stdout.length + extraOut),
        stderr: sliceStream(tail(stderr, extraErr), stderr, extraErr, stderr.length + extraErr),
        host: 'h',
        unclaimed: false,
      },
      'h',
    );
    expect(read.endsWith('[status: running]')).toBe(true);
  });
});
