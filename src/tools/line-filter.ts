/**
 * The `bash_output` filter: which lines of a read are shown. Pure. Lines end at `\n`; an
 * unterminated last line (a running task's line in progress, or a final line with no newline)
 * counts as a line too, so every byte of a read is either shown or counted as left out.
 */

/** A stream's text cut down to the lines `filter` matches, and how many lines it left out. */
export interface FilteredText {
  text: string;
  leftOut: number;
}

export function keepMatchingLines(text: string, filter: RegExp | undefined): FilteredText {
  if (filter === undefined || text === '') return { text, leftOut: 0 };
  // Each piece keeps its newline, so shown lines are byte for byte as the command wrote them.
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const kept = lines.filter((line) => filter.test(line.endsWith('\n') ? line.slice(0, -1) : line));
  return { text: kept.join(''), leftOut: lines.length - kept.length };
}
