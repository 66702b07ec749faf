/** The harness's tool seam: what a tool definition looks like and what the presentation views are. */

import type { z } from 'zod';
import type { ApprovalPrompt } from './approval.js';

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolResult {
  content: TextBlock[];
  /** Set only for infrastructure failures; a non-zero exit is a normal result. */
  isError?: boolean;
}

/** What the harness knows about the caller: the agent session (if any) and the call's abort signal. */
export interface ToolExecContext {
  agent?: { sessionId: string; cwd?: string };
  signal?: AbortSignal;
  /** Asks the caller's user about a durable approval request now (the MCP server: elicitation). */
  approvalPrompt?: ApprovalPrompt;
}

export type ToolKind =
  | 'read'
  | 'edit'
  | 'delete'
  | 'move'
  | 'search'
  | 'execute'
  | 'think'
  | 'fetch'
  | 'other';

export type CallView =
  | { card: 'generic'; title: string; kind?: ToolKind; rawInput?: unknown; content?: TextBlock[] }
  | { card: 'terminal'; title: string; description?: string; cwd?: string };

export type ResultView =
  | { card: 'generic'; title?: string; content?: TextBlock[] }
  | { card: 'terminal'; title?: string; output?: string; exitCode?: number; signal?: string };

export interface Tool<Args = unknown> {
  name: string;
  /** What the model reads about the tool. */
  description: string;
  parameters: z.ZodType<Args>;
  /** `parameters` as JSON Schema, for harnesses that speak it. */
  inputSchema: Record<string, unknown>;
  execute(args: unknown, exec?: ToolExecContext): Promise<ToolResult>;
  /** Pure and total: safe on replayed or malformed arguments. */
  presentCall(args: unknown): CallView;
  presentResult(args: unknown, result: ToolResult): ResultView;
}

/** The text a tool result gives the model: its text blocks, joined. */
export function resultText(result: ToolResult): string {
  return result.content.map((block) => block.text).join('');
}

export function textResult(text: string, isError = false): ToolResult {
  return isError
    ? { content: [{ type: 'text', text }], isError: true }
    : { content: [{ type: 'text', text }] };
}
