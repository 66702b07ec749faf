import { resultText, type ToolResult } from '../shared/tool-types.js';

/** Prints a tool result as the model would read it (errors to stderr); resolves to the exit code. */
export function printResult(result: ToolResult): number {
  const text = resultText(result);
  (result.isError ? process.stderr : process.stdout).write(text.endsWith('\n') ? text : `${text}\n`);
  return result.isError ? 1 : 0;
}
