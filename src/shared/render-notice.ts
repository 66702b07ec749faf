/**
 * The lines of a completion notice after its first: the task's last output, shaped as a finished
 * run shows it (stdout, a `[stderr]` section), at most NOTICE_TAIL_CHARS characters, so the model
 * can often act without a read. The read position does not move: `bash_output` still returns all
 * of it. Pure, for workflow code (the task's own workflow builds its notice).
 */

import { NOTICE_TAIL_CHARS } from './limits.js';
import { NO_OUTPUT, STDERR_HEADER } from './render.js';
import { screenLine, screenRows } from './render-screen.js';
import { tailText } from './stream-text.js';
import type { BashTaskResult } from './task.js';
import type { TerminalScreen } from './terminal.js';

export const noticeMarkers = {
  whole: '[output]',
  cut: (chars: number) => `[output: the last ${chars} characters; bash_output returns all of it]`,
  screenCut: (rows: number) => `[the last ${rows} rows of the screen; bash_output shows all of it]`,
} as const;

/** The notice's output lines for a run that ended with `result`: a terminal run's, its last screen. */
export function renderNoticeOutput(result: BashTaskResult, limit = NOTICE_TAIL_CHARS): string {
  if (result.terminal) return renderNoticeScreen(result.terminal.screen, limit);
  const stdout = result.stdout.bytes > 0 ? tailText(result.stdout) : '';
  const stderr = result.stderr.bytes > 0 ? tailText(result.stderr) : '';
  if (stdout === '' && stderr === '') return NO_OUTPUT;
  // Each stream gets half when both need more; what one leaves goes to the other.
  const stderrShare = stdout === '' ? limit : Math.max(Math.floor(limit / 2), limit - stdout.length);
  const shownStderr = lastChars(stderr, stderrShare);
  const shownStdout = lastChars(stdout, limit - shownStderr.length);
  // Whole when the result's tails are the whole streams (no spill path named) and all of them shows.
  const whole =
    shownStdout === stdout &&
    shownStderr === stderr &&
    result.stdout.spillPath === undefined &&
    result.stderr.spillPath === undefined;
  let text = whole ? noticeMarkers.whole : noticeMarkers.cut(shownStdout.length + shownStderr.length);
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
