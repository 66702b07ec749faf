import type { BashTasks } from '../client/bash-tasks.js';
import { parseArguments, type TaskArguments, taskArguments, toInputSchema } from './arguments.js';
import { bashKillDescription } from './descriptions.js';
import { errorResult } from './error-result.js';
import { presentTaskCall, presentTaskResult } from './present.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from './types.js';

export const killedTask = (taskId: string) => `killed background task ${taskId}`;
export const alreadyFinished = (taskId: string) => `task ${taskId} had already finished`;

/** The `bash_kill` tool: ends a background task's process group, behind the ownership fence. */
export function createBashKillTool(tasks: BashTasks): Tool<TaskArguments> {
  return {
    name: 'bash_kill',
    description: bashKillDescription,
    parameters: taskArguments,
    inputSchema: toInputSchema(taskArguments),
    presentCall: (args) => presentTaskCall('bash_kill', 'Kill background task', args),
    presentResult: presentTaskResult,
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const { task_id: taskId } = parseArguments(taskArguments, args);
        const outcome = await tasks.kill(taskId, exec.agent?.sessionId);
        return textResult(outcome === 'killed' ? killedTask(taskId) : alreadyFinished(taskId));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}
