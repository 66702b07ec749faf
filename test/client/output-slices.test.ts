import { describe, expect, it } from 'vitest';
import { sliceStream } from '../../src/client/output-slices.js';
import { decodeText, unfinishedCharLength } from '../../src/shared/stream-text.js';
import type { StreamTail } from '../../src/shared/task.js';

/** A stream of `total` bytes whose held tail is `tail`. */
function stream(
  total: number,
  tail: string | Buffer,
  spillPath?: string,
): { stream: StreamTail; tail: Buffer } {
  const bytes = Buffer.isBuffer(tail) ? tail : Buffer.from(tail);
  return {
    stream: { bytes: total, tailBase64: bytes.toString('base64'), ...(spillPath ? { spillPath } : {}) },
    tail: bytes,
  };
}

describe('sliceStream', () => {
  it('gives the bytes between the read position and the claim, from the held tail', () => {
    const { stream: s, tail } = stream(10, '56789', '/spill/x.stdout');
    expect(sliceStream(s, tail, 7, 10)).toEqual({
      text: '789',
      droppedBytes: 0,
      spillPath: '/spill/x.stdout',
    });
    expect(sliceStream(s, tail, 5, 8)).toEqual({
      text: '567',
      droppedBytes: 0,
      spillPath: '/spill/x.stdout',
    });
  });

  it('counts what fell out of the tail as dropped and shows the whole tail', () => {
    const { stream: s, tail } = stream(10, '56789');
    expect(sliceStream(s, tail, 2, 10)).toEqual({ text: '56789', droppedBytes: 3 });
  });

  it('gives nothing when another read already went past the claim', () => {
    const { stream: s, tail } = stream(10, '56789');
    expect(sliceStream(s, tail, 10, 10)).toEqual({ text: '', droppedBytes: 0 });
    expect(sliceStream(s, tail, 12, 10)).toEqual({ text: '', droppedBytes: 0 });
  });

  it('skips the rest of a character whose start fell out of the tail', () => {
    const euro = Buffer.from('€'); // e2 82 ac
    // The stream is € a b €; the tail lost the first byte of the first €.
    const { stream: s, tail } = stream(8, Buffer.concat([euro.subarray(1), Buffer.from('ab'), euro]));
    expect(sliceStream(s, tail, 0, 8)).toEqual({ text: 'ab€', droppedBytes: 1 });
  });
});

describe('stream text', () => {
  it('finds an unfinished UTF-8 character at the end', () => {
    const euro = Buffer.from('€');
    expect(unfinishedCharLength(Buffer.from('abc'))).toBe(0);
    expect(unfinishedCharLength(euro)).toBe(0);
    expect(unfinishedCharLength(euro.subarray(0, 1))).toBe(1);
    expect(unfinishedCharLength(euro.subarray(0, 2))).toBe(2);
    expect(unfinishedCharLength(Buffer.concat([Buffer.from('x'), Buffer.from('😀').subarray(0, 3)]))).toBe(3);
  });

  it('decodes a cut tail from its first whole character', () => {
    expect(decodeText(Buffer.from('€x').subarray(1), true)).toBe('x');
    expect(decodeText(Buffer.from('€x'), false)).toBe('€x');
  });
});
