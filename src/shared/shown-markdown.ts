/**
 * Texts a model or a session gave, placed in the markdown the Temporal Web UI renders (a workflow's
 * summary and details) in the shown form (shown-text.ts), so that nothing in them can end the block
 * they stand in or write markdown of their own (CommonMark, with GitHub's extensions). Pure.
 */
import { shownLineCut, shownLines } from './shown-text.js';

/**
 * A fenced code block of `text`, line by line in the shown form. Its fence is longer than any run
 * of backticks in the text (CommonMark closes a block only with a fence at least as long as its
 * opening one), so no line of the text can end it.
 */
export function markdownCodeBlock(text: string, language: string): string {
  const body = shownLines(text).join('\n');
  let longestRun = 0;
  let run = 0;
  for (const char of body) {
    run = char === '`' ? run + 1 : 0;
    longestRun = Math.max(longestRun, run);
  }
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}${language}\n${body}\n${fence}`;
}

/**
 * `text` on one line in the shown form (cut to `widthChars` with `…`, when given), as markdown text
 * that shows it as it is: every character markdown reads as markup is escaped with a backslash
 * (CommonMark lets any ASCII punctuation be), and so is a first character that would open a list.
 */
export function markdownLine(text: string, widthChars = Number.POSITIVE_INFINITY): string {
  return shownLineCut(text, widthChars)
    .replace(/[\\`*_~[\]<>&!#|$]/g, '\\$&')
    .replace(/^[-+=]/, '\\$&')
    .replace(/^(\d+)([.)])/, '$1\\$2');
}
