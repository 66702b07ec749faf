/** The exact text of a `bash_output` answer (see render.ts for the markers it shares with runs). */
import type { OutputRead, StreamRead } from '../client/output-reads.js';
import { statusLine } from '../shared/status-line.js';
import { keepMatchingLines } from './line-filter.js';
import {
  joinLines,
  limitLines,
  markers,
  NO_NEW_OUTPUT,
  nameSpillFile,
  STDERR_HEADER,
  WORKER_UNAVAILABLE,
} from './render.js';

/**
 * Renders a `bash_output` answer: the new stdout, a `[stderr]` section, or `(no new output)`; a line
 * naming the complete files when bytes were dropped; the status line; and, when no worker took the
 * read, a line saying the position did not move. With `filter`, only matching lines are shown and a
 * line says how many were left out (they are read all the same).
 */
export function renderOutputRead(read: OutputRead, readerHost: string, filter?: RegExp): string {
  const name = (stream: StreamRead) => nameSpillFile(stream.spillPath, read.host, readerHost);
  const names = (streams: StreamRead[]) => [...new Set(streams.map(name))].join(', ');
  const stdout = keepMatchingLines(read.stdout.text, filter);
  const stderr = keepMatchingLines(read.stderr.text, filter);
  let text = stdout.text;
  if (stderr.text !== '') text = joinLines(text, `${STDERR_HEADER}\n${stderr.text}`);
  const leftOut = stdout.leftOut + stderr.leftOut;
  if (text === '' && leftOut === 0) text = NO_NEW_OUTPUT;
  const notApplied = stdout.notApplied ?? stderr.notApplied;
  if (notApplied !== undefined && filter !== undefined)
    text = joinLines(
      text,
      notApplied.timedOut
        ? markers.filterTimedOut(filter.source)
        : markers.filterFailed(filter.source, notApplied.message),
    );
  if (leftOut > 0) {
    const filtered = [
      ...(stdout.leftOut > 0 ? [read.stdout] : []),
      ...(stderr.leftOut > 0 ? [read.stderr] : []),
    ];
    text = joinLines(text, markers.leftOut(leftOut, names(filtered)));
  }
  const dropped = [read.stdout, read.stderr].filter((stream) => stream.droppedBytes > 0);
  if (dropped.length > 0) text = joinLines(text, markers.dropped(names(dropped)));
  for (const line of limitLines(read.limits)) text = joinLines(text, line);
  text = joinLines(text, statusLine(read.state));
  return read.unclaimed ? joinLines(text, WORKER_UNAVAILABLE) : text;
}
