/**
 * The `bash_output` filter: which lines of a read are shown. Lines end at `\n`; an unterminated
 * last line (a final line with no newline) counts as a line too, so every byte of a read is either
 * shown or counted as left out. The expression is the model's and the lines are a command's: a
 * pattern that backtracks without end is stopped after FILTER_TIME_LIMIT_MS, and the read then
 * shows every line instead, so nothing is lost and the tools' process never hangs.
 */
import vm from 'node:vm';
import { firstLine } from '../shared/checks.js';
import { FILTER_TIME_LIMIT_MS } from '../shared/limits.js';

/** A stream's text cut down to the lines `filter` matches, and how many lines it left out. */
export interface FilteredText {
  text: string;
  leftOut: number;
  /** Why the filter was not applied (`text` is then the whole stream): it ran out of time, or failed. */
  notApplied?: { timedOut: true } | { timedOut: false; message: string };
}

// Run in a context of its own so that its time limit can stop a regular expression mid-match.
const matchLines = new vm.Script(
  'lines.filter((line) => filter.test(line.endsWith("\\n") ? line.slice(0, -1) : line))',
);

export function keepMatchingLines(
  text: string,
  filter: RegExp | undefined,
  timeLimitMs = FILTER_TIME_LIMIT_MS,
): FilteredText {
  if (filter === undefined || text === '') return { text, leftOut: 0 };
  // Each piece keeps its newline, so shown lines are byte for byte as the command wrote them.
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  let kept: string[];
  try {
    kept = matchLines.runInContext(vm.createContext({ lines, filter }), { timeout: timeLimitMs }) as string[];
  } catch (err) {
    // Out of time, or out of stack on a huge line: nothing is lost, every line is shown.
    const timedOut = (err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
    return { text, leftOut: 0, notApplied: timedOut ? { timedOut } : { timedOut, message: firstLine(err) } };
  }
  return { text: kept.join(''), leftOut: lines.length - kept.length };
}
