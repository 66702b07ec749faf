/** Starting a background task with the `bash` tool, and the task id its answer names. */
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { text } from './tool-calls.js';

const STARTED = /^started background task (bash-[0-9a-f-]{36})/;

/**
 * The task id in bash's answer to a background start: exactly `started background task <id>`,
 * then `ending` (the CLI prints a newline after it). Throws on any other text.
 */
export function startedTaskId(answer: string, ending = ''): string {
  const match = STARTED.exec(answer);
  if (!match?.[1] || answer !== `${match[0]}${ending}`)
    throw new Error(`unexpected start text: ${JSON.stringify(answer)}`);
  return match[1];
}

/**
 * Starts `command` in the background with the `bash` tool, in the context `exec`; `args` adds to
 * the call's arguments or replaces them (a description of its own, `tty`, `keep_stdin_open`).
 * Resolves with the task's id.
 */
export async function startBackground(
  bash: Tool,
  command: string,
  exec: ToolExecContext = {},
  args: Record<string, unknown> = {},
): Promise<string> {
  const answer = await bash.execute(
    { command, description: 'Run in background', run_in_background: true, ...args },
    exec,
  );
  return startedTaskId(text(answer));
}
