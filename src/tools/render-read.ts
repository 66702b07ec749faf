/** The exact text of a `bash_output` answer (see render.ts for the markers it shares with runs). */

import { type AnswerParts, fitToBudget } from '../shared/output-budget.js';
import type { OutputRead, StreamRead, TerminalRead } from '../shared/read-position.js';
import {
  droppedMarker,
  joinLines,
  limitLines,
  markers,
  NO_NEW_OUTPUT,
  nameSpillFiles,
  readFiles,
  STDERR_HEADER,
  WORKER_UNAVAILABLE,
} from '../shared/render.js';
import { renderScrolledOff, SCREEN_UNAVAILABLE, screenLine, screenRows } from '../shared/render-screen.js';
import { statusLine } from '../shared/status-line.js';
import { type FilteredText, keepMatchingLines } from './line-filter.js';

/**
 * Renders a `bash_output` answer: the new stdout, a `[stderr]` section, or `(no new output)`; a line
 * naming the complete files when bytes were dropped; the status line; and, when no worker took the
 * read, a line saying the position did not move. With `filter`, only matching lines are shown and a
 * line says how many were left out (they are read all the same). With `maxOutputTokens`, the output
 * keeps its head and tail (`fitToBudget`); the lines after it are kept whole.
 */
export function renderOutputRead(
  read: OutputRead,
  readerHost: string,
  filter?: RegExp,
  maxOutputTokens?: number,
): string {
  return fitToBudget(outputReadParts(read, readerHost, filter), maxOutputTokens);
}

function outputReadParts(read: OutputRead, readerHost: string, filter: RegExp | undefined): AnswerParts {
  const names = (streams: StreamRead[]) => nameSpillFiles(streams, read.host, readerHost);
  if (read.terminal) return terminalReadParts(read, read.terminal, names([read.stdout]), filter);
  const files = readFiles(read, readerHost);
  if (read.screenUnavailable) return { body: SCREEN_UNAVAILABLE, trailer: [statusLine(read.state)], files };
  const stdout = keepMatchingLines(read.stdout.text, filter);
  const stderr = keepMatchingLines(read.stderr.text, filter);
  let body = stdout.text;
  if (stderr.text !== '') body = joinLines(body, `${STDERR_HEADER}\n${stderr.text}`);
  const leftOut = stdout.leftOut + stderr.leftOut;
  if (body === '' && leftOut === 0) body = NO_NEW_OUTPUT;
  const trailer: string[] = [];
  const notApplied = stdout.notApplied ?? stderr.notApplied;
  if (notApplied !== undefined && filter !== undefined) trailer.push(filterNotApplied(filter, notApplied));
  if (leftOut > 0) {
    const filtered = [
      ...(stdout.leftOut > 0 ? [read.stdout] : []),
      ...(stderr.leftOut > 0 ? [read.stderr] : []),
    ];
    trailer.push(markers.leftOut(leftOut, names(filtered)));
  }
  const dropped = droppedMarker([read.stdout, read.stderr], read.host, readerHost);
  if (dropped !== undefined) trailer.push(dropped);
  return { body, trailer: [...trailer, ...statusLines(read)], files };
}

/** The line saying a filter was not applied, and why. */
function filterNotApplied(filter: RegExp, notApplied: NonNullable<FilteredText['notApplied']>): string {
  return notApplied.timedOut
    ? markers.filterTimedOut(filter.source)
    : markers.filterFailed(filter.source, notApplied.message);
}

/** The limits a finished task ran into, its status line, and the line an unclaimed read adds. */
function statusLines(read: OutputRead): string[] {
  return [
    ...limitLines(read.limits),
    statusLine(read.state),
    ...(read.unclaimed ? [WORKER_UNAVAILABLE] : []),
  ];
}

/**
 * A terminal task's read: its screen (the read's `scrollback`: the lines that scrolled off since
 * the last read), then the status line. A filter keeps the matching rows or lines; the screen's
 * size and cursor line stays.
 */
function terminalReadParts(
  read: OutputRead,
  terminal: TerminalRead,
  logName: string,
  filter?: RegExp,
): AnswerParts {
  const { scrolledOff, screen } = terminal;
  const rows = scrolledOff ? scrolledOff.lines : screenRows(screen);
  const kept = keepMatchingLines(rows.length > 0 ? `${rows.join('\n')}\n` : '', filter);
  const lines = kept.text === '' ? [] : kept.text.replace(/\n$/, '').split('\n');
  const body = scrolledOff ? renderScrolledOff(lines, scrolledOff.missing, logName) : lines.join('\n');
  const trailer = scrolledOff ? [] : [screenLine(screen)];
  if (kept.notApplied !== undefined && filter !== undefined)
    trailer.push(filterNotApplied(filter, kept.notApplied));
  if (kept.leftOut > 0) trailer.push(markers.leftOut(kept.leftOut, logName));
  return { body, trailer: [...trailer, ...statusLines(read)], files: logName };
}
