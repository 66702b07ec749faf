import type { z } from 'zod';
import { errorResult } from '../shared/error-result.js';
import {
  type CallView,
  type Tool,
  type ToolExecContext,
  type ToolResult,
  textResult,
} from '../shared/tool-types.js';
import { parseArguments, type TaskArguments, taskArguments, toInputSchema } from './arguments.js';
import { presentTaskCall, presentTaskResult } from './present.js';

export interface TaskToolSpec<Args extends TaskArguments = TaskArguments> {
  name: string;
  description: string;
  /** The call card's title before the id: `<verb> <id>`. */
  verb: string;
  /** The tool's arguments: `task_id` and any of its own. @default taskArguments */
  parameters?: z.ZodType<Args>;
  /** The call card. @default `<verb> <id>`, with the id as raw input */
  presentCall?: (args: unknown) => CallView;
  /** Does the work for the calling session and returns the text the model sees. */
  run(
    taskId: string,
    callerSessionId: string | undefined,
    args: Args,
    exec: ToolExecContext,
  ): Promise<string>;
}

/** A tool that names one task (`bash_output`, `bash_kill`): one schema, one error path, one look. */
export function createTaskTool<Args extends TaskArguments = TaskArguments>(
  spec: TaskToolSpec<Args>,
): Tool<Args> {
  const parameters = spec.parameters ?? (taskArguments as unknown as z.ZodType<Args>);
  return {
    name: spec.name,
    description: spec.description,
    parameters,
    inputSchema: toInputSchema(parameters),
    presentCall: spec.presentCall ?? ((args) => presentTaskCall(spec.name, spec.verb, args)),
    presentResult: presentTaskResult,
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const parsed = parseArguments(parameters, args);
        return textResult(await spec.run(parsed.task_id, exec.agent?.sessionId, parsed, exec));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}
