/**
 * How tool calls and results look in a UI. Pure and total: these run again on session replay, over
 * arguments logged by older versions, so an odd shape falls back to a generic view, never a throw.
 */

import type { CallView, ResultView, ToolResult } from '../shared/tool-types.js';
import {
  type BashArguments,
  bashArguments,
  bashInputArguments,
  bashListArguments,
  bashOutputArguments,
  taskArguments,
} from './arguments.js';

const EXIT_CODE_LINE = /^\[exit code: (-?\d+)\]$/;
const SIGNAL_LINE = /^\[killed by signal: ([A-Z0-9]+)\]$/;
/** The line a foreground call that moved to the background ends with (before a worker-unavailable line). */
const MOVED_LINE =
  /^\[still running after \d+ms; moved to background task \S+\. Read its output with bash_output\.\]$/;

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
    description:
      call.max_output_tokens === undefined
        ? call.description
        : `${call.description} (${outputBudgetLine(call.max_output_tokens)})`,
    ...(call.workdir !== undefined ? { cwd: call.workdir } : {}),
  };
}

/** What a call's `max_output_tokens` means, as a UI shows it. */
const outputBudgetLine = (tokens: number) =>
  `shows at most ${tokens} tokens of output (the head and the tail)`;

export function presentBashResult(args: unknown, result: ToolResult): ResultView {
  const text = resultText(result);
  const call = validBash(args);
  if (call === undefined || call.run_in_background || result.isError || movedToBackground(text)) {
    return consoleView(text);
  }
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

/** The run's text says it moved to the background: no exit to show, the task still runs. */
function movedToBackground(text: string): boolean {
  return text
    .split('\n')
    .slice(-2)
    .some((line) => MOVED_LINE.test(line));
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

/**
 * A `bash_output` call: as any task call, with a text block saying how long it may wait and which
 * lines it shows when those arguments are given.
 */
export function presentOutputCall(verb: string, args: unknown): CallView {
  const parsed = bashOutputArguments.safeParse(args);
  if (!parsed.success) return presentTaskCall('bash_output', verb, args);
  const { task_id: taskId, wait_ms: waitMs, filter, max_output_tokens: budget } = parsed.data;
  const details = [
    ...(waitMs !== undefined && waitMs > 0 ? [`waits up to ${waitMs}ms for new output`] : []),
    ...(filter !== undefined ? [`shows only lines matching /${filter}/`] : []),
    ...(budget !== undefined ? [outputBudgetLine(budget)] : []),
  ];
  return {
    card: 'generic',
    title: `${verb} ${taskId}`,
    kind: 'execute',
    rawInput: taskId,
    ...(details.length > 0 ? { content: [{ type: 'text', text: details.join('\n') }] } : {}),
  };
}

/** A `bash_input` call: as any task call, with the text it writes (and whether it closes stdin) as content. */
export function presentInputCall(verb: string, args: unknown): CallView {
  const parsed = bashInputArguments.safeParse(args);
  if (!parsed.success) return presentTaskCall('bash_input', verb, args);
  const { task_id: taskId, text, close } = parsed.data;
  const lines = [...(text !== '' ? [text] : []), ...(close === true ? ['(then closes its stdin)'] : [])];
  return {
    card: 'generic',
    title: `${verb} ${taskId}`,
    kind: 'execute',
    rawInput: taskId,
    content: [{ type: 'text', text: lines.join('\n') }],
  };
}

/** A `bash_list` call: a generic card, its arguments as raw input. */
export function presentListCall(args: unknown): CallView {
  const parsed = bashListArguments.safeParse(args);
  if (!parsed.success) return { card: 'generic', title: 'bash_list', kind: 'read', rawInput: args };
  return {
    card: 'generic',
    title: parsed.data.all === true ? 'List background tasks, ended ones too' : 'List background tasks',
    kind: 'read',
    rawInput: parsed.data,
  };
}

/** A task tool's result: its text in a console fence. */
export function presentTaskResult(_args: unknown, result: ToolResult): ResultView {
  return consoleView(resultText(result));
}
