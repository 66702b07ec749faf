/**
 * The exact text the model sees for a foreground run. Pure: no I/O, no clock; `present.ts` parses
 * it back, and a round-trip test keeps the two in step.
 */
import type { BashTaskResult, StreamTail } from '../shared/task.js';

export const NO_OUTPUT = '(no output)';
export const STDERR_HEADER = '[stderr]';
export const UNAVAILABLE = '(unavailable)';

export const markers = {
  timedOut: (ms: number) => `[timed out after ${ms}ms]`,
  killedBySignal: (signal: string) => `[killed by signal: ${signal}]`,
  exitCode: (code: number) => `[exit code: ${code}]`,
  truncated: (path: string) => `[output truncated; full output: ${path}]`,
} as const;

/**
 * Renders a finished run: stdout, a `[stderr]` section, or `(no output)`, then the status markers.
 * `readerHost` decides whether a spill path can be named: a file on another host is `(unavailable)`.
 */
export function renderRun(result: BashTaskResult, readerHost: string): string {
  const spillName = (stream: StreamTail): string | undefined => {
    if (stream.spillPath === undefined) return undefined;
    return result.host === readerHost ? stream.spillPath : UNAVAILABLE;
  };
  let text = section(result.stdout.tail, spillName(result.stdout));
  if (result.stderr.bytes > 0) {
    text = joinLines(text, `${STDERR_HEADER}\n${section(result.stderr.tail, spillName(result.stderr))}`);
  }
  if (text === '') text = NO_OUTPUT;
  if (result.timedOutAfterMs !== undefined) text = joinLines(text, markers.timedOut(result.timedOutAfterMs));
  if (result.signal !== null) text = joinLines(text, markers.killedBySignal(result.signal));
  else if (result.exitCode !== null && result.exitCode !== 0)
    text = joinLines(text, markers.exitCode(result.exitCode));
  return text;
}

function section(tail: string, spillName: string | undefined): string {
  return spillName === undefined ? tail : joinLines(tail, markers.truncated(spillName));
}

/** Appends `line` on a line of its own: exactly one newline separates it from what came before. */
export function joinLines(text: string, line: string): string {
  if (text === '') return line;
  return text.endsWith('\n') ? text + line : `${text}\n${line}`;
}
