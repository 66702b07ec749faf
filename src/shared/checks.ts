/**
 * The checks of options a developer passes (`createBashWorker`, `createBashTools`, `BashTasks`) and
 * the one-line texts of errors: one of each, used everywhere. A tool's own arguments are checked by
 * their zod schemas (tools/arguments.ts), with the model's wording.
 */

/** `value` when it is a positive number, else a RangeError: `<name> must be a positive number, got <value>`. */
export function positiveOption(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

/** `value` when it is a positive integer, else a RangeError: `<name> must be a positive integer, got <value>`. */
export function positiveIntegerOption(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** Text on one line: runs of whitespace (newlines too) become one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** An error's message (or anything thrown, as text) up to its first line break. */
export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n', 1)[0] ?? text;
}

/** An error's message (or anything thrown, as text) on one line, never empty. */
export function messageOf(err: unknown): string {
  return oneLine(err instanceof Error ? err.message : String(err)) || 'no message';
}
