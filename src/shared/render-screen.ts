/**
 * A terminal task's screen as the model reads it: each row as it appears, right-trimmed, without
 * escape codes, trailing blank rows dropped, then a line giving the terminal's size and the cursor.
 * `bash_output` of a terminal task puts its status line after it.
 */
import type { TerminalScreen } from './terminal.js';

export const NO_LINES_SCROLLED_OFF = '(no lines scrolled off)';

/** A running terminal task's read when no worker on its host answered: the screen is rendered there. */
export const SCREEN_UNAVAILABLE =
  "[screen unavailable: it is rendered on the task's host, and no worker there answered; the read position did not move]";

export const screenMarkers = {
  /** Lines that scrolled off before the ones shown, which the host no longer holds. */
  notHeld: (lines: number, path: string) =>
    `[${lines} earlier ${lines === 1 ? 'line that scrolled off is' : 'lines that scrolled off are'} not shown; the terminal's whole log: ${path}]`,
} as const;

export const screenLine = (screen: Pick<TerminalScreen, 'cols' | 'rows' | 'cursor'>) =>
  `[screen: ${screen.cols}x${screen.rows}, cursor at row ${screen.cursor.row}, column ${screen.cursor.column}]`;

export function renderScreen(screen: TerminalScreen): string {
  return [...screenRows(screen), screenLine(screen)].join('\n');
}

/** The screen's rows as it shows them: right-trimmed, trailing blank rows dropped. */
export function screenRows(screen: Pick<TerminalScreen, 'lines'>): string[] {
  const rows = screen.lines.map((line) => line.replace(/\s+$/, ''));
  while (rows.length > 0 && rows.at(-1) === '') rows.pop();
  return rows;
}

/**
 * What scrolled off a terminal's screen, oldest first: a line first when earlier ones are no
 * longer held (`notHeld`, naming the log), or `(no lines scrolled off)`.
 */
export function renderScrolledOff(lines: readonly string[], notHeld: number, logName: string): string {
  const shown = lines.length > 0 ? lines.join('\n') : notHeld > 0 ? '' : NO_LINES_SCROLLED_OFF;
  if (notHeld === 0) return shown;
  const marker = screenMarkers.notHeld(notHeld, logName);
  return shown === '' ? marker : `${marker}\n${shown}`;
}
