/**
 * The AI SDK adapter: each tool `createBashTools` returns, as an AI SDK `tool()` keyed by its name.
 * A thin mapping; schemas, texts and every Temporal concern stay in `src/tools`.
 */
import { type Tool as AiSdkTool, type FlexibleSchema, type JSONSchema7, jsonSchema, tool } from 'ai';
import { resultText, type Tool, type ToolExecContext, type ToolResult } from '../shared/tool-types.js';
import { describeValue } from '../tools/arguments.js';
import { type BashToolsOptions, createBashTools } from '../tools/create-bash-tools.js';

/** The agent session the tools act for, when the call's context names none. */
export interface AiSdkSession {
  /**
   * The agent session: it owns the background tasks it starts (another session's are refused),
   * counts toward the background cap, and gets the completion notices. @default no session: tasks
   * are unowned
   */
  sessionId?: string;
  /**
   * The session's working directory; a relative `workdir` resolves against it. A call needs a
   * `sessionId` (here or in its context) to use it. @default the worker's
   */
  cwd?: string;
}

export interface AiSdkToolsOptions extends BashToolsOptions, AiSdkSession {}

/**
 * The AI SDK tool set: `bash`, `bash_output`, `bash_kill` and any other tool `createBashTools` makes.
 * Typed for the installed `ai`: on AI SDK 7 each tool's context is an `AiSdkSession`, so a typed
 * caller's `toolsContext` takes `{ bash: { sessionId } }`; on AI SDK 6 a tool has no context type.
 */
export type AiSdkTools = Record<string, AiSdkToolOf<ExecuteOptions>>;

/** `execute`'s options in the installed `ai`: 7's carry the tool's own `context`, 6's do not. */
type ExecuteOptions = Parameters<NonNullable<AiSdkTool<unknown, string>['execute']>>[1];

/** One tool: AI SDK 7 infers a tool's context type from `contextSchema` alone, so that is the field typed. */
type AiSdkToolOf<Options> = 'context' extends keyof Options
  ? WithSessionContext<AiSdkTool<unknown, string>>
  : AiSdkTool<unknown, string>;

type WithSessionContext<T> = T extends unknown
  ? Omit<T, 'contextSchema'> & { contextSchema?: FlexibleSchema<AiSdkSession | undefined> }
  : never;

/**
 * Thrown by an AI SDK tool's `execute` when the durable-bash tool answered with an error result (bad
 * arguments, Temporal unreachable, an aborted call, an unknown or foreign task, a refused command):
 * the SDK reports a tool error, and the model reads `message`, the tool's exact text.
 */
export class BashToolError extends Error {
  override readonly name = 'BashToolError';
  constructor(
    readonly toolName: string,
    readonly result: ToolResult,
  ) {
    super(resultText(result));
  }

  /** The tool's text alone: AI SDK 7 sends the model `String(error)` (6 sends `message`). */
  override toString(): string {
    return this.message;
  }
}

export function isBashToolError(err: unknown): err is BashToolError {
  return err instanceof BashToolError;
}

/**
 * The durable-bash tools for `generateText`/`streamText`, AI SDK 6 or 7. A call's session comes from
 * its context (`{ sessionId, cwd }`), field by field, then from `options`: AI SDK 7 gives each tool
 * its own (`toolsContext: { bash: {...} }`), AI SDK 6 the whole call's (`experimental_context`). The
 * call's `abortSignal` stops a foreground run. A result is the tool's text; an error result throws a
 * `BashToolError` whose message is that text.
 */
export function createAiSdkTools(options: AiSdkToolsOptions): AiSdkTools {
  const { sessionId, cwd, ...bashOptions } = options;
  const defaults: AiSdkSession = {
    ...(sessionId !== undefined ? { sessionId: checkedString('sessionId', sessionId) } : {}),
    ...(cwd !== undefined ? { cwd: checkedString('cwd', cwd) } : {}),
  };
  return Object.fromEntries(
    createBashTools(bashOptions).map((bashTool) => [bashTool.name, toAiSdkTool(bashTool, defaults)]),
  );
}

function toAiSdkTool(bashTool: Tool, defaults: AiSdkSession): AiSdkTool<unknown, string> {
  return tool({
    description: bashTool.description,
    // The JSON Schema the tool derives from its zod schema, as every harness sends it. Validation is
    // left to the tool, so a bad call reads the tool's own one line (`invalid timeoutMs: ...`), not
    // the SDK's dump of zod issues.
    inputSchema: jsonSchema(bashTool.inputSchema as JSONSchema7, { validate: acceptAny }),
    async execute(input, options) {
      const { abortSignal } = options;
      const agent =
        options.context !== undefined
          ? sessionOf(defaults, options.context, `toolsContext.${bashTool.name}`)
          : sessionOf(defaults, (options as AiSdk6Options).experimental_context, 'experimental_context');
      const exec: ToolExecContext = {
        ...(agent !== undefined ? { agent } : {}),
        ...(abortSignal !== undefined ? { signal: abortSignal } : {}),
      };
      const result = await bashTool.execute(input, exec);
      if (result.isError) throw new BashToolError(bashTool.name, result);
      return resultText(result);
    },
  });
}

/**
 * Thrown by `execute` when the call's context gives a `sessionId` or `cwd` that is not a non-empty
 * string. A `TypeError` whose text, as the model reads it, is its message in AI SDK 6 and 7 alike.
 */
class InvalidContextError extends TypeError {
  override toString(): string {
    return this.message;
  }
}

/** What AI SDK 6 passes `execute` beside AI SDK 7's fields: the call's context, one for all tools. */
interface AiSdk6Options {
  experimental_context?: unknown;
}

function acceptAny(value: unknown) {
  return { success: true, value } as const;
}

/** The call's session: the context's `sessionId` and `cwd` where it gives them, else the defaults. */
function sessionOf(defaults: AiSdkSession, context: unknown, field: string): ToolExecContext['agent'] {
  const given = typeof context === 'object' && context !== null ? (context as Record<string, unknown>) : {};
  const sessionId =
    given.sessionId !== undefined
      ? checkedString(`${field}.sessionId`, given.sessionId, InvalidContextError)
      : defaults.sessionId;
  const cwd =
    given.cwd !== undefined ? checkedString(`${field}.cwd`, given.cwd, InvalidContextError) : defaults.cwd;
  if (sessionId === undefined) {
    if (cwd !== undefined)
      throw new InvalidContextError(`invalid cwd: a session's cwd needs a sessionId, got none`);
    return undefined;
  }
  return cwd !== undefined ? { sessionId, cwd } : { sessionId };
}

function checkedString(
  field: string,
  value: unknown,
  ErrorClass: new (message: string) => TypeError = TypeError,
): string {
  if (typeof value === 'string' && value !== '') return value;
  throw new ErrorClass(`invalid ${field}: expected a non-empty string, got ${describeValue(value)}`);
}
