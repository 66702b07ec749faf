/** Reading a background task with the `bash_output` tool until its status line says it ended. */
import { WORKER_UNAVAILABLE } from '../../src/shared/render.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { text } from './tool-calls.js';

export interface ReadToEnd {
  /**
   * What the reads showed before their status lines, in order (`(no new output)` left out, and what
   * a read no worker applied showed: it comes again).
   */
  output: string;
  /** The last answer's status line: how the task ended. */
  status: string;
  /** Every answer's whole text, in order. */
  answers: string[];
}

export interface ReadToEndOptions {
  /** Each read's `wait_ms`. @default none: a read answers at once */
  waitMs?: number;
  /** @default 20_000 */
  timeoutMs?: number;
  /** The pause between reads. @default 100 */
  pauseMs?: number;
  /** A read that throws (a server coming back) counts as an answer `[error: …]`, and reading goes on. @default false */
  tolerateErrors?: boolean;
}

const STATUS_LINE = /^\[status: [^\]]*\]$/;

/** Reads `taskId` with `bashOutput` in the context `exec` until an answer ends in a status line other than running. */
export async function readToEnd(
  bashOutput: Tool,
  taskId: string,
  exec: ToolExecContext = {},
  options: ReadToEndOptions = {},
): Promise<ReadToEnd> {
  const { waitMs, timeoutMs = 20_000, pauseMs = 100, tolerateErrors = false } = options;
  const args = { task_id: taskId, ...(waitMs === undefined ? {} : { wait_ms: waitMs }) };
  const deadline = Date.now() + timeoutMs;
  const answers: string[] = [];
  let output = '';
  for (;;) {
    const answer = await bashOutput.execute(args, exec).then(text, (err: unknown) => {
      if (!tolerateErrors) throw err;
      return `[error: ${String(err)}]`;
    });
    answers.push(answer);
    // No worker applied the read: what it showed comes again in the next read that one applies.
    const unclaimed = answer.endsWith(`\n${WORKER_UNAVAILABLE}`);
    const { shown, status } = splitAnswer(answer);
    if (!unclaimed) output += shown;
    const ended = status !== undefined && STATUS_LINE.test(status) && !status.startsWith('[status: running');
    if (ended && !unclaimed) return { output, status, answers };
    if (Date.now() > deadline)
      throw new Error(`task ${taskId} still running after ${timeoutMs}ms; last answer: ${answer}`);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/**
 * One `bash_output` answer: what it showed before its last line (nothing for `(no new output)`),
 * and that line when it is a status line (undefined when the answer has none after its output).
 */
export function splitAnswer(answer: string): { shown: string; status: string | undefined } {
  const cut = answer.lastIndexOf('\n[status: ');
  if (cut === -1) return { shown: '', status: undefined };
  const shown = answer.slice(0, cut + 1);
  return { shown: shown === '(no new output)\n' ? '' : shown, status: answer.slice(cut + 1) };
}
