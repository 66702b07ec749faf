/**
 * What an `exec` or `writeStdin` answers, built from a run's result or a durable read (pure: no
 * I/O). The texts inside are durable-bash's own (render.ts, status-line.ts); the frame around them
 * is the SDK's (`formatExecResponse`), and the cut for `maxOutputTokens` is in the SDK's units.
 */
import type { OutputRead } from '../shared/read-position.js';
import {
  droppedMarker,
  endMarkers,
  joinLines,
  limitLines,
  runStreams,
  STDERR_HEADER,
  WORKER_UNAVAILABLE,
} from '../shared/render.js';
import { statusLine } from '../shared/status-line.js';
import { tailText } from '../shared/stream-text.js';
import type { BashTaskResult } from '../shared/task.js';

/**
 * The SDK's own estimate of a token (`truncateOutput` in its shared/output: 4 bytes a token). The
 * shell capability's `max_output_tokens` and the `Original token count` line are in its units, so a
 * budget the model sets means here what it means on UnixLocal and Docker; a real tokenizer would
 * make the same number cut differently depending on the backend.
 */
const BYTES_PER_TOKEN = 4;

/** One answer's output: the text the model reads, its streams apart, and where all of it is kept. */
export interface ExecOutput {
  output: string;
  stdout: string;
  stderr: string;
  /** The complete stdout (or stderr) on the task's host, when a read or result names it. */
  spillPath?: string;
}

/**
 * A run that ended in the foreground: its output as the `bash` tool shows it (`runStreams`, cut
 * tails naming their files) and the lines of an end short of its own exit (`endMarkers`); no
 * `(no output)` and no exit-code line, which the SDK's frame says. `host` is the session's: the
 * model's commands run there, so a file there is named.
 */
export function resultOutput(result: BashTaskResult, host: string): ExecOutput {
  const output = [runStreams(result, host), ...endMarkers(result)].reduce(joinLines);
  const spillPath = result.stdout.spillPath ?? result.stderr.spillPath;
  return {
    output,
    stdout: tailText(result.stdout),
    stderr: tailText(result.stderr),
    ...(spillPath !== undefined ? { spillPath } : {}),
  };
}

/**
 * What reads since the last answer returned (each read moved the durable read position past its
 * bytes, so they never come again): their streams as `bash_output` shows them, the line naming the
 * complete files when bytes were dropped, and at an end the limits it ran into and the status line
 * of an end that is not a plain exit; the worker-unavailable line of a read that moved nothing (its
 * output will come again, as that line says). No `(no new output)`: the SDK answers empty output.
 */
export function readsOutput(reads: readonly OutputRead[], host: string): ExecOutput {
  const stdout = reads.map((read) => read.stdout.text).join('');
  const stderr = reads.map((read) => read.stderr.text).join('');
  let output = stderr === '' ? stdout : joinLines(stdout, `${STDERR_HEADER}\n${stderr}`);
  const streams = reads.flatMap((read) => [read.stdout, read.stderr]);
  const last = reads.at(-1);
  const dropped = droppedMarker(streams, last?.host, host);
  if (dropped !== undefined) output = joinLines(output, dropped);
  if (last !== undefined && last.state.status !== 'running') {
    for (const line of limitLines(last.limits)) output = joinLines(output, line);
    if (last.state.status !== 'completed') output = joinLines(output, statusLine(last.state));
  }
  if (last?.unclaimed) output = joinLines(output, WORKER_UNAVAILABLE);
  const spillPath = streams.find((stream) => stream.spillPath !== undefined)?.spillPath;
  return { output, stdout, stderr, ...(spillPath !== undefined ? { spillPath } : {}) };
}

/**
 * The output cut to `maxOutputTokens` (the SDK's units): the head and the tail kept, the middle
 * replaced by one line that says how many tokens went and names the file holding all of it (when a
 * read or result named one: a short foreground run's output is all in its result, and its file is
 * not kept). Under the budget, the output as it is.
 */
export function cutToTokens(
  output: string,
  maxOutputTokens: number | undefined,
  spillPath: string | undefined,
): { text: string; originalTokenCount?: number } {
  if (maxOutputTokens === undefined) return { text: output };
  const bytes = Buffer.from(output, 'utf8');
  const budget = maxOutputTokens * BYTES_PER_TOKEN;
  if (bytes.length <= budget) return { text: output };
  const originalTokenCount = Math.ceil(bytes.length / BYTES_PER_TOKEN);
  const marker = (tokens: number) =>
    `\n…${tokens} tokens truncated${spillPath === undefined ? '' : `; full output: ${spillPath}`}…\n`;
  const room = Math.max(0, budget - Buffer.byteLength(marker(originalTokenCount)));
  const head = wholeChars(bytes.subarray(0, Math.floor(room / 2)), 'head');
  const tail = wholeChars(bytes.subarray(bytes.length - (room - Math.floor(room / 2))), 'tail');
  const cutTokens = Math.ceil(
    (bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail)) / BYTES_PER_TOKEN,
  );
  return { text: `${head}${marker(cutTokens)}${tail}`, originalTokenCount };
}

/** Bytes cut out of UTF-8 text as text, leaving out a character the cut split. */
function wholeChars(bytes: Buffer, side: 'head' | 'tail'): string {
  let start = 0;
  let end = bytes.length;
  if (side === 'tail') while (start < end && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
  else {
    // Back off from a lead byte whose continuation bytes the cut left out.
    let lead = end - 1;
    while (lead > 0 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead -= 1;
    const first = bytes[lead] ?? 0;
    const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
    if (lead + length > end) end = lead;
  }
  return bytes.subarray(start, end).toString('utf8');
}
