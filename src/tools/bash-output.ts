import os from 'node:os';
import type { BashTasks } from '../client/bash-tasks.js';
import type { TaskArguments } from './arguments.js';
import { bashOutputDescription } from './descriptions.js';
import { renderOutputRead } from './render.js';
import { createTaskTool } from './task-tool.js';
import type { Tool } from './types.js';

/** The `bash_output` tool: what a background task printed since the last read, behind the ownership fence. */
export function createBashOutputTool(tasks: BashTasks): Tool<TaskArguments> {
  return createTaskTool({
    name: 'bash_output',
    description: bashOutputDescription,
    verb: 'Read output from background task',
    run: async (taskId, callerSessionId) =>
      renderOutputRead(await tasks.read(taskId, callerSessionId), os.hostname()),
  });
}
