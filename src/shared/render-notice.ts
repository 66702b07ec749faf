/**
 * The lines of a completion notice after its first: the task's output that no read has shown yet
 * (`bash_output`, or the foreground result of a run that moved to the background), shaped as a
 * finished run shows it (stdout, a `[stderr]` section), at most NOTICE_TAIL_CHARS characters, so
 * the model can often act without a read, and never sees a line twice. The read position does not
 * move: `bash_output` still returns all of it. Pure, for workflow code (the task's run builds a
 * notice of a task no read has seen, its reader workflow the notice of one it has).
 */
import { NOTICE_TAIL_CHARS } from './limits.js';
import { type ReadPosition, START_OF_OUTPUT } from './read-position.js';
import { markers, NO_OUTPUT, STDERR_HEADER } from './render.js';
import { screenLine, screenRows } from './render-screen.js';
import { textFrom } from './stream-text.js';
import type { BashTaskResult } from './task.js';
import type { TerminalScreen } from './terminal.js';

export const noticeMarkers = {
  whole: '[output]',
  cut: (chars: number) => `[output: the last ${chars} characters; bash_output returns all of it]`,
  /** Reads showed some of the output: what they did not. */
  sinceRead: '[output since the last read]',
  sinceReadCut: (chars: number) =>
    `[output since the last read: the last ${chars} characters; bash_output returns all of it]`,
  /** Reads showed all of it (the notice says so in place of repeating it). */
  allRead: '[output: all of it was already read]',
  screenCut: (rows: number) => `[the last ${rows} rows of the screen; bash_output shows all of it]`,
} as const;

/**
 * Whether a completion notice's text (`noticeText`) shows only the end of the output it had to show
 * (its marker, the line after the first, says so): then `bash_output` still owes the rest.
 */
export function noticeOutputIsCut(notice: string): boolean {
  const marker = notice.split('\n', 2)[1] ?? '';
  return CUT_MARKER_STARTS.some((start) => marker.startsWith(start));
}

/** How the markers of a notice that shows only the end of its output start. */
const CUT_MARKER_STARTS = [
  noticeMarkers.cut(0),
  noticeMarkers.sinceReadCut(0),
  noticeMarkers.screenCut(0),
].map((marker) => marker.slice(0, marker.indexOf('0')));

/**
 * The notice's output lines for a run that ended with `result`, whose readers have been given the
 * bytes before `read`: a terminal run's, its last screen (whatever reads showed). A run that kept a
 * foreground call's timeout (`keepTimeout`) and ran into it says so after them, as the call's
 * answer would have.
 */
export function renderNoticeOutput(
  result: Pick<BashTaskResult, 'stdout' | 'stderr' | 'terminal' | 'timedOutAfterMs'>,
  limit = NOTICE_TAIL_CHARS,
  read: ReadPosition = START_OF_OUTPUT,
): string {
  const output = noticeOutput(result, limit, read);
  return result.timedOutAfterMs === undefined
    ? output
    : `${output}\n${markers.timedOut(result.timedOutAfterMs)}`;
}

function noticeOutput(
  result: Pick<BashTaskResult, 'stdout' | 'stderr' | 'terminal'>,
  limit: number,
  read: ReadPosition,
): string {
  if (result.terminal) return renderNoticeScreen(result.terminal.screen, limit);
  const unread = {
    stdout: result.stdout.bytes > 0 ? textFrom(result.stdout, read.stdout) : { text: '', whole: true },
    stderr: result.stderr.bytes > 0 ? textFrom(result.stderr, read.stderr) : { text: '', whole: true },
  };
  const stdout = unread.stdout.text;
  const stderr = unread.stderr.text;
  const readBefore = read.stdout > 0 || read.stderr > 0;
  if (stdout === '' && stderr === '') return readBefore ? noticeMarkers.allRead : NO_OUTPUT;
  // Each stream gets half when both need more; what one leaves goes to the other.
  const stderrShare = stdout === '' ? limit : Math.max(Math.floor(limit / 2), limit - stdout.length);
  const shownStderr = lastChars(stderr, stderrShare);
  const shownStdout = lastChars(stdout, limit - shownStderr.length);
  // Whole when the result's tails hold every unread byte and all of them shows.
  const whole =
    shownStdout === stdout && shownStderr === stderr && unread.stdout.whole && unread.stderr.whole;
  const chars = shownStdout.length + shownStderr.length;
  let text = readBefore
    ? whole
      ? noticeMarkers.sinceRead
      : noticeMarkers.sinceReadCut(chars)
    : whole
      ? noticeMarkers.whole
      : noticeMarkers.cut(chars);
  if (shownStdout !== '') text += `\n${withoutFinalNewline(shownStdout)}`;
  if (stderr !== '') text += `\n${STDERR_HEADER}\n${withoutFinalNewline(shownStderr)}`;
  return text;
}

/** A terminal run's last screen, as `bash_output` shows it, its rows cut from the top to fit `limit`. */
function renderNoticeScreen(screen: TerminalScreen, limit: number): string {
  const rows = screenRows(screen);
  let shown = rows;
  while (shown.length > 0 && shown.join('\n').length > limit) shown = shown.slice(1);
  const text = [...shown, screenLine(screen)].join('\n');
  return shown.length === rows.length ? text : `${noticeMarkers.screenCut(shown.length)}\n${text}`;
}

/** At most the last `count` characters of `text`, from the start of a line when one starts in them. */
function lastChars(text: string, count: number): string {
  if (text.length <= count) return text;
  let tail = text.slice(text.length - count);
  const lineStart = tail.indexOf('\n') + 1;
  if (lineStart > 0 && lineStart < tail.length) tail = tail.slice(lineStart);
  // Never half of a surrogate pair.
  const first = tail.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff ? tail.slice(1) : tail;
}

function withoutFinalNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}
