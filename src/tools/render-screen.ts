/**
 * A terminal task's screen as the model reads it: each row as it appears, right-trimmed, without
 * escape codes, trailing blank rows dropped, then a line giving the terminal's size and the cursor.
 * `bash_output` of a terminal task puts its status line after it.
 */
import type { TerminalScreen } from '../shared/terminal.js';

export const screenLine = (screen: Pick<TerminalScreen, 'cols' | 'rows' | 'cursor'>) =>
  `[screen: ${screen.cols}x${screen.rows}, cursor at row ${screen.cursor.row}, column ${screen.cursor.column}]`;

export function renderScreen(screen: TerminalScreen): string {
  const rows = screen.lines.map((line) => line.replace(/\s+$/, ''));
  while (rows.length > 0 && rows.at(-1) === '') rows.pop();
  return [...rows, screenLine(screen)].join('\n');
}
