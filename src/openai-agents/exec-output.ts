/**
 * What an `exec` or `writeStdin` answers, built from a run's result or a durable read (pure: no
 * I/O). The texts inside are durable-bash's own (render.ts, status-line.ts); the frame around them
 * is the SDK's (`formatExecResponse`), and the cut for `maxOutputTokens` is the tools' own
 * (output-budget.ts: 4 bytes a token, as the SDK's `truncateOutput` counts, so a budget the model
 * sets means here what it means on UnixLocal and Docker) around the SDK's marker.
 */

import { BYTES_PER_TOKEN, cutMiddle, tokensOfBytes, utf8Length } from '../shared/output-budget.js';
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
  const spillPath = result.stdout.spillPath ?? result.stderr.spillPath ?? result.spillFiles?.stdout;
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
 * read or result named one: a run started with the budget keeps its files when its output is
 * longer). Under the budget, the output as it is.
 */
export function cutToTokens(
  output: string,
  maxOutputTokens: number | undefined,
  spillPath: string | undefined,
): { text: string; originalTokenCount?: number } {
  if (maxOutputTokens === undefined) return { text: output };
  const bytes = utf8Length(output);
  const budget = maxOutputTokens * BYTES_PER_TOKEN;
  if (bytes <= budget) return { text: output };
  const originalTokenCount = tokensOfBytes(bytes);
  const marker = (tokens: number) =>
    `\n…${tokens} tokens truncated${spillPath === undefined ? '' : `; full output: ${spillPath}`}…\n`;
  const cut = cutMiddle(output, Math.max(0, budget - utf8Length(marker(originalTokenCount))));
  return { text: `${cut.head}${marker(tokensOfBytes(cut.cutBytes))}${cut.tail}`, originalTokenCount };
}
