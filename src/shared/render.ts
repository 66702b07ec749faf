/**
 * The exact text the model sees for a run and for a read of a background task's output (the read's
 * own rendering, which runs the filter, is in render-read.ts). Pure: no I/O, no clock, nothing
 * workflow code cannot import (`durable-bash/workflow` renders runs with it); `present.ts` parses a
 * run's text back, and a round-trip test keeps the two in step.
 */

import { FILTER_TIME_LIMIT_MS } from './limits.js';
import { joinLines } from './lines.js';
import { fitToBudget } from './output-budget.js';
import type { OutputRead, StreamRead } from './read-position.js';
import { renderScreen, renderScrolledOff } from './render-screen.js';
import { tailText } from './stream-text.js';
import {
  type BashTaskResult,
  type LimitsReached,
  type StreamTail,
  streamFileOf,
  type TerminalEnd,
} from './task.js';

export { joinLines };

export const NO_OUTPUT = '(no output)';
export const STDERR_HEADER = '[stderr]';
export const UNAVAILABLE = '(unavailable)';
export const NO_NEW_OUTPUT = '(no new output)';
export const WORKER_UNAVAILABLE =
  '[task worker unavailable: this is the output the server holds; the read position did not move, so it will be shown again]';

export const markers = {
  timedOut: (ms: number) => `[timed out after ${ms}ms]`,
  killedBySignal: (signal: string) => `[killed by signal: ${signal}]`,
  exitCode: (code: number) => `[exit code: ${code}]`,
  truncated: (path: string) => `[output truncated; full output: ${path}]`,
  dropped: (paths: string) => `[some output was dropped from memory; full output: ${paths}]`,
  movedToBackground: (ms: number, taskId: string) =>
    `[still running after ${ms}ms; moved to background task ${taskId}. Read its output with bash_output.]`,
  filterFailed: (source: string, message: string) =>
    `[the filter /${source}/ failed (${message}) and was not applied: every line is shown]`,
  filterTimedOut: (source: string) =>
    `[the filter /${source}/ took over ${FILTER_TIME_LIMIT_MS}ms and was not applied: every line is shown]`,
  leftOut: (lines: number, paths: string) =>
    `[${lines} ${lines === 1 ? 'line' : 'lines'} not matching the filter ${lines === 1 ? 'was' : 'were'} left out; full output: ${paths}]`,
  outputCapped: (stream: string, bytes: number) =>
    `[${stream} stopped at the task's limit of ${bytes} bytes; later writes to it failed]`,
  outputFailed: (stream: string, error: string) =>
    `[${stream} could not be saved: its spill file refused a write (${error}); later writes to it failed]`,
  outOfMemory: (bytes: number) =>
    `[out of memory: the kernel killed a process of the task at its limit of ${bytes} bytes]`,
  processLimit: (limit: number) => `[process limit reached: forks failed at the task's limit of ${limit}]`,
  diskCapped: (cap: string) =>
    `[ended: this session's files on its host passed its disk cap of ${cap} (/tmp, /var/tmp, home and its output)]`,
} as const;

/** What `bash` with `run_in_background` answers at once. */
export const backgroundStarted = (taskId: string) => `started background task ${taskId}`;

/** One line for each limit the task ran into, in a fixed order. */
export function limitLines(limits: LimitsReached | undefined): string[] {
  if (!limits) return [];
  return [
    ...(limits.output?.streams ?? []).map((stream) =>
      markers.outputCapped(stream, limits.output?.bytes ?? 0),
    ),
    ...(['stdout', 'stderr'] as const).flatMap((stream) => {
      const error = limits.outputFailed?.[stream];
      return error === undefined ? [] : [markers.outputFailed(stream, error)];
    }),
    ...(limits.memory ? [markers.outOfMemory(limits.memory.bytes)] : []),
    ...(limits.processes ? [markers.processLimit(limits.processes.limit)] : []),
    ...(limits.disk ? [markers.diskCapped(diskCapText(limits.disk))] : []),
  ];
}

/** A disk cap as its lines name it: `N bytes`, or `N files`. */
export function diskCapText(cap: NonNullable<LimitsReached['disk']>): string {
  return 'bytes' in cap ? `${cap.bytes} bytes` : `${cap.files} files`;
}

/**
 * Renders a finished run: stdout, a `[stderr]` section, or `(no output)`, then the status markers.
 * `readerHost` decides whether a spill path can be named: a file on another host is `(unavailable)`.
 * With `maxOutputTokens`, the output keeps its head and tail (`fitToBudget`); the markers stay whole.
 */
export function renderRun(result: BashTaskResult, readerHost: string, maxOutputTokens?: number): string {
  const trailer = endMarkers(result);
  if (result.signal === null && result.exitCode !== null && result.exitCode !== 0)
    trailer.push(markers.exitCode(result.exitCode));
  const streams = [
    { spillPath: streamFileOf(result, 'stdout') },
    ...(result.stderr.bytes > 0 ? [{ spillPath: streamFileOf(result, 'stderr') }] : []),
  ];
  const files = nameSpillFiles(streams, result.host, readerHost);
  return fitToBudget({ body: runStreams(result, readerHost) || NO_OUTPUT, trailer, files }, maxOutputTokens);
}

/**
 * A finished run's output: stdout, then a `[stderr]` section, each followed by the line naming its
 * complete file when the tail was cut (or a terminal run's scrollback and last screen). Empty when
 * it printed nothing.
 */
export function runStreams(result: BashTaskResult, readerHost: string): string {
  const spillName = (stream: StreamTail): string | undefined =>
    stream.spillPath === undefined ? undefined : nameSpillFile(stream.spillPath, result.host, readerHost);
  if (result.terminal) return renderTerminalRun(result.terminal, spillName(result.stdout) ?? UNAVAILABLE);
  const stdout = section(tailText(result.stdout), spillName(result.stdout));
  if (result.stderr.bytes === 0) return stdout;
  return joinLines(stdout, `${STDERR_HEADER}\n${section(tailText(result.stderr), spillName(result.stderr))}`);
}

/**
 * The lines that say how a run ended short of its own exit: each limit it ran into, its timeout,
 * the signal that killed it. The exit code is not among them: a tool answer adds its marker, a
 * framework's frame says it.
 */
export function endMarkers(result: BashTaskResult): string[] {
  return [
    ...limitLines(result.limits),
    ...(result.timedOutAfterMs !== undefined ? [markers.timedOut(result.timedOutAfterMs)] : []),
    ...(result.signal !== null ? [markers.killedBySignal(result.signal)] : []),
  ];
}

/**
 * A terminal run's output: what scrolled by (a line first when its start is no longer held), then
 * the last screen.
 */
function renderTerminalRun(terminal: TerminalEnd, logName: string): string {
  const { scrolledOff, scrolledOffDropped, screen } = terminal;
  const scrolled = scrolledOff === '' ? [] : scrolledOff.split('\n');
  const before =
    scrolled.length > 0 || scrolledOffDropped > 0
      ? renderScrolledOff(scrolled, scrolledOffDropped, logName)
      : '';
  return joinLines(before, renderScreen(screen));
}

/**
 * Renders a foreground call whose run moved to the background: the output so far as a run shows it
 * (stdout, a `[stderr]` section, or `(no output)`), a line naming the complete files when bytes were
 * dropped, the move's line, and, when no worker took the read, a line saying the position did not move.
 */
export function renderMovedRun(
  read: OutputRead,
  taskId: string,
  afterMs: number,
  readerHost: string,
  maxOutputTokens?: number,
): string {
  let body = read.terminal ? renderScreen(read.terminal.screen) : read.stdout.text;
  if (read.stderr.text !== '') body = joinLines(body, `${STDERR_HEADER}\n${read.stderr.text}`);
  const dropped = droppedMarker([read.stdout, read.stderr], read.host, readerHost);
  const trailer = [
    ...(dropped !== undefined ? [dropped] : []),
    markers.movedToBackground(afterMs, taskId),
    ...(read.unclaimed ? [WORKER_UNAVAILABLE] : []),
  ];
  return fitToBudget(
    { body: body || NO_OUTPUT, trailer, files: readFiles(read, readerHost) },
    maxOutputTokens,
  );
}

/** The spill files of what a read shows (its stdout, and its stderr when there is some): a budget's line names them. */
export function readFiles(read: OutputRead, readerHost: string): string {
  const shown = read.stderr.text === '' ? [read.stdout] : [read.stdout, read.stderr];
  return nameSpillFiles(shown, read.host, readerHost);
}

/**
 * The line a read adds when it dropped bytes of some of `streams` (they were no longer in memory):
 * it names their complete files. Undefined when nothing was dropped.
 */
export function droppedMarker(
  streams: readonly StreamRead[],
  taskHost: string | undefined,
  readerHost: string,
): string | undefined {
  const dropped = streams.filter((stream) => stream.droppedBytes > 0);
  if (dropped.length === 0) return undefined;
  return markers.dropped(nameSpillFiles(dropped, taskHost, readerHost));
}

/** The spill files of `streams` as a reader may name them (`nameSpillFile`), each once: a marker's list. */
export function nameSpillFiles(
  streams: ReadonlyArray<{ spillPath?: string | undefined }>,
  taskHost: string | undefined,
  readerHost: string,
): string {
  const names = streams.map((stream) => nameSpillFile(stream.spillPath, taskHost, readerHost));
  return [...new Set(names)].join(', ');
}

/** A spill file as a reader may name it: its path when the reader is on the task's host, else (unavailable). */
export function nameSpillFile(
  spillPath: string | undefined,
  taskHost: string | undefined,
  readerHost: string,
): string {
  return spillPath !== undefined && taskHost === readerHost ? spillPath : UNAVAILABLE;
}

function section(tail: string, spillName: string | undefined): string {
  return spillName === undefined ? tail : joinLines(tail, markers.truncated(spillName));
}
