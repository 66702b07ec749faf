// A spawned process's stream bookkeeping (src/ai-sdk/stream-segments.ts), pure: what a durable read
// adds to a stream at each offset, so that every byte comes once and in order, exactly.
import { describe, expect, it } from 'vitest';
import {
  appendSegments,
  exactTail,
  plannedEnd,
  type Segment,
  segmentsOfRead,
} from '../../src/ai-sdk/stream-segments.js';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const part = (text: string, droppedBytes = 0) => ({ text, droppedBytes });

describe('segmentsOfRead', () => {
  it('holds a read that starts where the stream stands and gives its text exactly as bytes', () => {
    expect(segmentsOfRead(10, { from: 10, upTo: 15 }, part('héll'), true)).toEqual([
      { kind: 'bytes', bytes: bytes('héll') },
    ]);
  });

  it('reads by range the bytes before the read (another holder read them) and those it dropped', () => {
    expect(segmentsOfRead(4, { from: 10, upTo: 20 }, part('tail', 6), true)).toEqual([
      { kind: 'range', start: 4, end: 16 },
      { kind: 'bytes', bytes: bytes('tail') },
    ]);
  });

  it('reads by range a text that is not the bytes (invalid UTF-8 shown as U+FFFD, a cut character)', () => {
    expect(segmentsOfRead(0, { from: 0, upTo: 3 }, part('a\uFFFD'), true)).toEqual([
      { kind: 'range', start: 0, end: 3 },
    ]);
    expect(segmentsOfRead(0, { from: 0, upTo: 9 }, part('abc', 4), true)).toEqual([
      { kind: 'range', start: 0, end: 9 },
    ]);
  });

  it('holds no text for a stream that already owes something: a range instead', () => {
    expect(segmentsOfRead(5, { from: 5, upTo: 8 }, part('abc'), false)).toEqual([
      { kind: 'range', start: 5, end: 8 },
    ]);
  });

  it('gives only what lies past the stream: nothing for a read before it, the rest of one across it', () => {
    expect(segmentsOfRead(20, { from: 10, upTo: 20 }, part('0123456789'), true)).toEqual([]);
    expect(segmentsOfRead(15, { from: 10, upTo: 20 }, part('0123456789'), true)).toEqual([
      { kind: 'bytes', bytes: bytes('56789') },
    ]);
  });

  it('says a tail is exact only when its bytes and the dropped ones make the range', () => {
    expect(exactTail(part('ab', 1), { from: 0, upTo: 3 })).toEqual(bytes('ab'));
    expect(exactTail(part('ab', 1), { from: 0, upTo: 4 })).toBeUndefined();
  });
});

describe('appendSegments and plannedEnd', () => {
  it('joins a range to the range it continues, and ends where the last segment ends', () => {
    const segments: Segment[] = [{ kind: 'range', start: 0, end: 5 }];
    appendSegments(segments, [
      { kind: 'range', start: 5, end: 9 },
      { kind: 'bytes', bytes: bytes('xy') },
    ]);
    expect(segments).toEqual([
      { kind: 'range', start: 0, end: 9 },
      { kind: 'bytes', bytes: bytes('xy') },
    ]);
    expect(plannedEnd(0, segments)).toBe(11);
    expect(plannedEnd(7, [])).toBe(7);
  });
});
