/**
 * Maps a durable-bash `Tool` onto the harness's `ToolDefinition`, generically: every tool
 * `createBashTools` returns registers the same way, so a new tool needs no code here.
 */
import type { Agent } from '@deepseek-ai/dsh-agent';
import { HarnessError } from '@deepseek-ai/dsh-llm';
import type {
  ToolResult as HarnessToolResult,
  JsonSchemaNode,
  ToolCallView,
  ToolDefinition,
} from '@deepseek-ai/dsh-tools';
import { TOOL_ABORTED } from '@deepseek-ai/dsh-tools';
import { type CallView, resultText, type Tool, type ToolExecContext } from '../shared/tool-types.js';

/**
 * The canonical value of every durable-bash tool call in the harness: the exact text the model
 * sees. The harness renders it as one text block.
 */
export interface ToolTextValue {
  text: string;
}

/** `output.schema` of every durable-bash tool: `{ text }`, nothing else. */
export const TOOL_TEXT_SCHEMA: JsonSchemaNode = {
  type: 'object',
  additionalProperties: false,
  properties: { text: { type: 'string' } },
  required: ['text'],
};

/** The JSON Schema keywords the harness's registry accepts (`JsonSchemaNode`); the rest are dropped. */
const SUPPORTED_KEYWORDS = new Set([
  'type',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'description',
  'title',
  'default',
  'examples',
]);

/**
 * Projects zod's JSON Schema onto the subset the harness's registry supports: validation stays
 * with the tool's own zod schema (a bad argument gets the tool's one-line error), so dropping a
 * constraint keyword (`minLength`, `exclusiveMinimum`, ...) loses nothing but a hint.
 */
export function toHarnessSchema(schema: unknown): JsonSchemaNode {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return {};
  const node: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SUPPORTED_KEYWORDS.has(key)) continue;
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      node.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, toHarnessSchema(property)]),
      );
    } else if (key === 'items') {
      node.items = toHarnessSchema(value);
    } else if (key === 'oneOf' && Array.isArray(value)) {
      node.oneOf = value.map(toHarnessSchema);
    } else if (key === 'additionalProperties' && typeof value !== 'boolean') {
      // A schema-valued additionalProperties is outside the subset: leave the object open.
    } else {
      node[key] = value;
    }
  }
  // zod writes `anyOf` for unions; the subset knows `oneOf` (exactly one branch).
  if (Array.isArray((schema as { anyOf?: unknown }).anyOf) && node.oneOf === undefined) {
    node.oneOf = ((schema as { anyOf: unknown[] }).anyOf as unknown[]).map(toHarnessSchema);
  }
  return node as JsonSchemaNode;
}

/** What durable-bash's tools know of the calling agent: its session id and the session's cwd. */
export function toolExecContext(exec: { agent?: Agent; signal: AbortSignal }): ToolExecContext {
  const agent = exec.agent;
  if (agent === undefined) return { signal: exec.signal };
  const cwd = agent.session.header.cwd;
  return { agent: { sessionId: agent.id, ...(cwd !== undefined ? { cwd } : {}) }, signal: exec.signal };
}

/** The harness's call view: the same shapes, except that it has no `think` kind (shown as `other`). */
export function toHarnessCallView(view: CallView): ToolCallView {
  if (view.card === 'generic' && view.kind === 'think') return { ...view, kind: 'other' };
  return view as ToolCallView;
}

/**
 * The harness definition of one durable-bash tool. A normal result is the value `{ text }`; an
 * error result (an infrastructure failure, a bad argument) is thrown, so the harness records it
 * as an `isError` result with that text; an aborted call throws the harness's own
 * `tool call aborted` (code `ABORTED`), as the seed's tool does.
 */
export function toToolDefinition(tool: Tool): ToolDefinition {
  return {
    name: tool.name,
    description: tool.description,
    parameters: toHarnessSchema(tool.inputSchema) as ToolDefinition['parameters'],
    output: {
      schema: TOOL_TEXT_SCHEMA,
      render: (_args, value) => [{ type: 'text', text: (value as unknown as ToolTextValue).text }],
    },
    async execute(args, exec): Promise<ToolTextValue> {
      const result = await tool.execute(args, toolExecContext(exec));
      if (result.isError !== true) return { text: resultText(result) };
      if (exec.signal.aborted) {
        const error = new HarnessError('tool call aborted', TOOL_ABORTED);
        error.name = 'AbortError';
        throw error;
      }
      throw new Error(resultText(result));
    },
    presentCall: (args) => toHarnessCallView(tool.presentCall(args)),
    presentResult: (args, result: HarnessToolResult) =>
      tool.presentResult(args, {
        content: result.content.flatMap((block) =>
          block.type === 'text' ? [{ type: 'text', text: block.text }] : [],
        ),
        ...(result.isError ? { isError: true } : {}),
      }),
  };
}
