/**
 * How tool calls and results look in a UI. Pure and total: these run again on session replay, over
 * arguments logged by older versions, so an odd shape falls back to a generic view, never a throw.
 */
import { type BashArguments, bashArguments, taskArguments } from './arguments.js';
import type { CallView, ResultView, ToolResult } from './types.js';

const EXIT_CODE_LINE = /^\[exit code: (-?\d+)\]$/;
const SIGNAL_LINE = /^\[killed by signal: ([A-Z0-9]+)\]$/;

function validBash(args: unknown): BashArguments | undefined {
  const parsed = bashArguments.safeParse(args);
  return parsed.success ? parsed.data : undefined;
}

export function presentBashCall(args: unknown): CallView {
  const call = validBash(args);
  if (call === undefined) return { card: 'generic', title: 'bash', kind: 'execute', rawInput: args };
  if (call.run_in_background) {
    return {
      card: 'generic',
      title: call.command,
      kind: 'execute',
      rawInput: call.command,
      content: [{ type: 'text', text: call.description }],
    };
  }
  return {
    card: 'terminal',
    title: call.command,
    description: call.description,
    ...(call.workdir !== undefined ? { cwd: call.workdir } : {}),
  };
}

export function presentBashResult(args: unknown, result: ToolResult): ResultView {
  const text = resultText(result);
  const call = validBash(args);
  if (call === undefined || call.run_in_background || result.isError) return consoleView(text);
  return { card: 'terminal', ...parseRunText(text) };
}

/** Reads a rendered run back: its output, and the exit code or signal from the final marker line. */
export function parseRunText(text: string): { output: string; exitCode?: number; signal?: string } {
  const cut = text.lastIndexOf('\n');
  const last = text.slice(cut + 1);
  const before = cut === -1 ? '' : text.slice(0, cut);
  const code = EXIT_CODE_LINE.exec(last);
  if (code?.[1] !== undefined) return { output: before, exitCode: Number(code[1]) };
  const signal = SIGNAL_LINE.exec(last);
  if (signal?.[1] !== undefined) return { output: before, signal: signal[1] };
  return { output: text, exitCode: 0 };
}

export function consoleView(text: string): ResultView {
  return { card: 'generic', content: [{ type: 'text', text: `\`\`\`console\n${text}\n\`\`\`` }] };
}

function resultText(result: ToolResult): string {
  const blocks = Array.isArray(result?.content) ? result.content : [];
  return blocks.map((block) => (typeof block?.text === 'string' ? block.text : '')).join('\n');
}

/** A call that names a task (`bash_output`, `bash_kill`): `<verb> <id>`, with the id as raw input. */
export function presentTaskCall(toolName: string, verb: string, args: unknown): CallView {
  const parsed = taskArguments.safeParse(args);
  if (!parsed.success) return { card: 'generic', title: toolName, kind: 'execute', rawInput: args };
  return {
    card: 'generic',
    title: `${verb} ${parsed.data.task_id}`,
    kind: 'execute',
    rawInput: parsed.data.task_id,
  };
}

/** A task tool's result: its text in a console fence. */
export function presentTaskResult(_args: unknown, result: ToolResult): ResultView {
  return consoleView(resultText(result));
}
