/**
 * Bytes and text of a stream's tail. Readers slice tails at exact byte offsets, so a tail is turned
 * back into its bytes first; text is decoded only for what is shown.
 */
import type { StreamTail } from './task.js';

/** The tail's bytes: from its text (valid UTF-8, as tails mostly travel) or its base64 (binary output). */
export function tailBytes(stream: StreamTail): Buffer {
  if (typeof stream.tail === 'string') return Buffer.from(stream.tail, 'utf8');
  return Buffer.from(stream.tailBase64 ?? '', 'base64');
}

/** What a tail holds of the bytes `[from, upTo)` of its stream, and how many of them it no longer holds. */
export function heldBytes(
  stream: StreamTail,
  tail: Buffer,
  from: number,
  upTo: number,
): { bytes: Buffer; droppedBytes: number; cutAtStart: boolean } {
  const tailStart = stream.bytes - tail.length;
  const first = Math.max(from, tailStart);
  return {
    bytes: first < upTo ? tail.subarray(first - tailStart, upTo - tailStart) : Buffer.alloc(0),
    droppedBytes: Math.max(0, Math.min(tailStart, upTo) - from),
    cutAtStart: from < tailStart,
  };
}

/**
 * The tail as text; a tail cut from a longer stream may start inside a character, which is skipped.
 * A text tail is valid UTF-8 that starts on a character already (see `tailOf`): it is the text.
 * Workflow code (`durable-bash/workflow` renders a child's result) has no `Buffer`: there a binary
 * tail is decoded with `TextDecoder`.
 */
export function tailText(stream: StreamTail): string {
  if (typeof stream.tail === 'string') return stream.tail;
  if (typeof Buffer === 'undefined') return decodeWithoutBuffer(stream);
  const bytes = tailBytes(stream);
  return decodeText(bytes, bytes.length < stream.bytes);
}

/** Decodes UTF-8; `cutAtStart` skips the continuation bytes of a character whose start was cut off. */
export function decodeText(bytes: Buffer, cutAtStart: boolean): string {
  return bytes.subarray(firstCharAt(bytes, cutAtStart)).toString('utf8');
}

/** Where the first whole character starts: past the continuation bytes of one whose start was cut off. */
function firstCharAt(bytes: Uint8Array, cutAtStart: boolean): number {
  let start = 0;
  // UTF-8 continuation bytes look like 0b10xxxxxx; at most three precede a character's end.
  if (cutAtStart) while (start < 3 && start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return start;
}

/**
 * How many bytes at the end of `bytes` are an unfinished UTF-8 character (0 to 3), so a reader can
 * leave them for the next read instead of splitting the character.
 */
export function unfinishedCharLength(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

/**
 * The text of a stream from byte `from` to its end, as far as its tail holds it; `whole` when the
 * tail holds all of it. Without `Buffer`: a task's reader workflow renders its completion notice
 * from the read position.
 */
export function textFrom(stream: StreamTail, from: number): { text: string; whole: boolean } {
  const bytes =
    typeof stream.tail === 'string'
      ? new TextEncoder().encode(stream.tail)
      : base64Bytes(stream.tailBase64 ?? '');
  const tailStart = stream.bytes - bytes.length;
  const first = Math.max(from, tailStart);
  const held = bytes.subarray(Math.min(bytes.length, first - tailStart));
  return {
    text: new TextDecoder().decode(held.subarray(firstCharAt(held, first > 0))),
    whole: from >= tailStart,
  };
}

/** `tailText` of a base64 tail where there is no `Buffer`. */
function decodeWithoutBuffer(stream: StreamTail): string {
  const bytes = base64Bytes(stream.tailBase64 ?? '');
  return new TextDecoder().decode(bytes.subarray(firstCharAt(bytes, bytes.length < stream.bytes)));
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Decodes standard base64 (RFC 4648, padded, as `Buffer` writes it). Written here, not taken from a
 * library: workflow code has neither `Buffer` nor `atob`, and this is all it needs.
 */
function base64Bytes(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const char of clean) {
    value = (value << 6) | BASE64.indexOf(char);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >> bits) & 0xff;
    }
  }
  return out.subarray(0, at);
}

/**
 * Where a read of a running command's stream may end, given the stream's last bytes (`tail`, from
 * offset `start` to its end): not inside an unfinished character, and with `wholeLines` (a filtered
 * read, which must see lines whole) not inside an unfinished line, unless the line began before
 * `from` and so is longer than the tail: then it is taken as it is. Never before `from`.
 */
export function readableEnd(tail: Buffer, start: number, from: number, wholeLines: boolean): number {
  if (wholeLines) {
    const lastNewline = tail.lastIndexOf(0x0a);
    if (lastNewline >= 0) return start + lastNewline + 1;
    if (start === from) return from; // All of it is one unfinished line.
  }
  return start + tail.length - unfinishedCharLength(tail);
}
