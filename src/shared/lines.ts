/** Joining the lines of a text the model sees (render.ts, output-budget.ts). */

/** Appends `line` on a line of its own: exactly one newline separates it from what came before. */
export function joinLines(text: string, line: string): string {
  if (text === '') return line;
  return text.endsWith('\n') ? text + line : `${text}\n${line}`;
}
