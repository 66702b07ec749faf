/** The exact text of a `bash_output` answer (see render.ts for the markers it shares with runs). */
import type { OutputRead, StreamRead, TerminalRead } from '../shared/read-position.js';
import {
  droppedMarker,
  joinLines,
  limitLines,
  markers,
  NO_NEW_OUTPUT,
  nameSpillFile,
  STDERR_HEADER,
  WORKER_UNAVAILABLE,
} from '../shared/render.js';
import { renderScrolledOff, SCREEN_UNAVAILABLE, screenLine, screenRows } from '../shared/render-screen.js';
import { statusLine } from '../shared/status-line.js';
import { keepMatchingLines } from './line-filter.js';

/**
 * Renders a `bash_output` answer: the new stdout, a `[stderr]` section, or `(no new output)`; a line
 * naming the complete files when bytes were dropped; the status line; and, when no worker took the
 * read, a line saying the position did not move. With `filter`, only matching lines are shown and a
 * line says how many were left out (they are read all the same).
 */
export function renderOutputRead(read: OutputRead, readerHost: string, filter?: RegExp): string {
  const name = (stream: StreamRead) => nameSpillFile(stream.spillPath, read.host, readerHost);
  const names = (streams: StreamRead[]) => [...new Set(streams.map(name))].join(', ');
  if (read.terminal) return renderTerminalRead(read, read.terminal, name(read.stdout), filter);
  if (read.screenUnavailable) return joinLines(SCREEN_UNAVAILABLE, statusLine(read.state));
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
  const dropped = droppedMarker([read.stdout, read.stderr], read.host, readerHost);
  if (dropped !== undefined) text = joinLines(text, dropped);
  return withStatus(text, read);
}

/** The limits a finished task ran into, its status line, and the line an unclaimed read adds. */
function withStatus(body: string, read: OutputRead): string {
  let text = body;
  for (const line of limitLines(read.limits)) text = joinLines(text, line);
  text = joinLines(text, statusLine(read.state));
  return read.unclaimed ? joinLines(text, WORKER_UNAVAILABLE) : text;
}

/**
 * A terminal task's read: its screen (the read's `scrollback`: the lines that scrolled off since
 * the last read), then the status line. A filter keeps the matching rows or lines; the screen's
 * size and cursor line stays.
 */
function renderTerminalRead(
  read: OutputRead,
  terminal: TerminalRead,
  logName: string,
  filter?: RegExp,
): string {
  const { scrolledOff, screen } = terminal;
  const rows = scrolledOff ? scrolledOff.lines : screenRows(screen);
  const kept = keepMatchingLines(rows.length > 0 ? `${rows.join('\n')}\n` : '', filter);
  const lines = kept.text === '' ? [] : kept.text.replace(/\n$/, '').split('\n');
  let text = scrolledOff
    ? renderScrolledOff(lines, scrolledOff.missing, logName)
    : [...lines, screenLine(screen)].join('\n');
  if (kept.notApplied !== undefined && filter !== undefined)
    text = joinLines(
      text,
      kept.notApplied.timedOut
        ? markers.filterTimedOut(filter.source)
        : markers.filterFailed(filter.source, kept.notApplied.message),
    );
  if (kept.leftOut > 0) text = joinLines(text, markers.leftOut(kept.leftOut, logName));
  return withStatus(text, read);
}
