import { parseArguments, type TaskArguments, taskArguments, toInputSchema } from './arguments.js';
import { errorResult } from './error-result.js';
import { presentTaskCall, presentTaskResult } from './present.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from './types.js';

export interface TaskToolSpec {
  name: string;
  description: string;
  /** The call card's title before the id: `<verb> <id>`. */
  verb: string;
  /** Does the work for the calling session and returns the text the model sees. */
  run(taskId: string, callerSessionId: string | undefined): Promise<string>;
}

/** A tool that takes one `task_id` (`bash_output`, `bash_kill`): one schema, one error path, one look. */
export function createTaskTool(spec: TaskToolSpec): Tool<TaskArguments> {
  return {
    name: spec.name,
    description: spec.description,
    parameters: taskArguments,
    inputSchema: toInputSchema(taskArguments),
    presentCall: (args) => presentTaskCall(spec.name, spec.verb, args),
    presentResult: presentTaskResult,
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const { task_id: taskId } = parseArguments(taskArguments, args);
        return textResult(await spec.run(taskId, exec.agent?.sessionId));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}
