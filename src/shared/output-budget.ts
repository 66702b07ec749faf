/**
 * Output budgets: a caller's `max_output_tokens` (the `bash` and `bash_output` tools, a sandbox's
 * `exec`), met by keeping the head and the tail of a text and cutting its middle. Pure, and free of
 * `Buffer`: workflow code renders runs with it (`durable-bash/workflow`).
 *
 * Tokens are estimated, 4 bytes of UTF-8 a token, the rule Codex (`APPROX_BYTES_PER_TOKEN` in
 * codex-rs/core/src/truncate.rs) and the OpenAI Agents SDK (`truncateOutput` in its sandbox's
 * shared/output) cut tool output by. A tokenizer would tie a budget to one model's vocabulary: the
 * model behind the tools is the caller's (Claude, GPT, an open model), and each counts differently.
 * The estimate costs nothing, gives the same cut on every host and in replay, and says in advance
 * what a budget holds.
 */

import { joinLines } from './lines.js';

/** Bytes of UTF-8 counted as one token. */
export const BYTES_PER_TOKEN = 4;

/** The largest `max_output_tokens` a call may ask for (about 4 MB of text: more than any result holds). */
export const MAX_OUTPUT_TOKENS = 1_000_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A text's size in UTF-8 bytes. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** The estimated tokens of `bytes` bytes of text: rounded up, so a budget is never overrun. */
export function tokensOfBytes(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

/** A text with its middle cut: the head and the tail kept, in whole characters, and the bytes left out. */
export interface MiddleCut {
  head: string;
  tail: string;
  cutBytes: number;
}

/**
 * Keeps at most `keepBytes` of `text`, half from its start and half from its end, each in whole
 * characters (a character the cut would split is left out), and says how many bytes went.
 */
export function cutMiddle(text: string, keepBytes: number): MiddleCut {
  const bytes = encoder.encode(text);
  const room = Math.max(0, Math.min(keepBytes, bytes.length));
  let headEnd = Math.floor(room / 2);
  let tailStart = bytes.length - (room - headEnd);
  // Back off from a character whose bytes the head's end splits: to the start of its lead byte.
  if (headEnd < bytes.length && isContinuation(bytes[headEnd])) {
    while (headEnd > 0 && isContinuation(bytes[headEnd])) headEnd -= 1;
  }
  while (tailStart < bytes.length && isContinuation(bytes[tailStart])) tailStart += 1;
  return {
    head: decoder.decode(bytes.subarray(0, headEnd)),
    tail: decoder.decode(bytes.subarray(tailStart)),
    cutBytes: tailStart - headEnd,
  };
}

/** Whether a byte continues a UTF-8 character (0b10xxxxxx) rather than starting one. */
function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The line that stands where a tool answer's middle was cut, naming where all of it is. */
export const budgetMarker = (tokens: number, files: string) =>
  `[${tokens} tokens cut from the middle to fit max_output_tokens; full output: ${files}]`;

/** A tool answer in the parts a budget treats apart. */
export interface AnswerParts {
  /** The output the answer shows: what a budget cuts. */
  body: string;
  /** The lines after it (markers, the status line: what the answer means), each kept whole. */
  trailer: readonly string[];
  /** Where the complete output is, as the marker names it (spill files, or `(unavailable)`). */
  files: string;
}

/**
 * A tool answer fitted to `maxOutputTokens`: the body keeps its head and tail around
 * `budgetMarker`, and the trailer follows whole. Without a budget, or within it, the answer as it
 * is. When the trailer alone fills the budget, the body is only the marker: the lines that say how
 * the task stands come first.
 */
export function fitToBudget(parts: AnswerParts, maxOutputTokens: number | undefined): string {
  const { body, trailer, files } = parts;
  const whole = [body, ...trailer].reduce(joinLines);
  if (maxOutputTokens === undefined) return whole;
  const budget = maxOutputTokens * BYTES_PER_TOKEN;
  const wholeBytes = utf8Length(whole);
  if (wholeBytes <= budget) return whole;
  const bodyBytes = utf8Length(body);
  const rest = wholeBytes - bodyBytes;
  // The marker's size depends on the count it gives: room for the largest count, and two newlines.
  const markerBytes = utf8Length(budgetMarker(tokensOfBytes(bodyBytes), files)) + 2;
  const cut = cutMiddle(body, budget - rest - markerBytes);
  const marker = budgetMarker(tokensOfBytes(cut.cutBytes), files);
  return [cut.head, marker, cut.tail, ...trailer].filter((part) => part !== '').reduce(joinLines);
}
