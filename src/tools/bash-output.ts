import os from 'node:os';
import type { BashTasks } from '../client/bash-tasks.js';
import { parseArguments, type TaskArguments, taskArguments, toInputSchema } from './arguments.js';
import { bashOutputDescription } from './descriptions.js';
import { errorResult } from './error-result.js';
import { presentTaskCall, presentTaskResult } from './present.js';
import { renderOutputRead } from './render.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from './types.js';

/** The `bash_output` tool: what a background task printed since the last read, behind the ownership fence. */
export function createBashOutputTool(tasks: BashTasks): Tool<TaskArguments> {
  return {
    name: 'bash_output',
    description: bashOutputDescription,
    parameters: taskArguments,
    inputSchema: toInputSchema(taskArguments),
    presentCall: (args) => presentTaskCall('bash_output', 'Read output from background task', args),
    presentResult: presentTaskResult,
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const { task_id: taskId } = parseArguments(taskArguments, args);
        return textResult(renderOutputRead(await tasks.read(taskId, exec.agent?.sessionId), os.hostname()));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}
