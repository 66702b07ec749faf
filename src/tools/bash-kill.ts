import type { BashTasks } from '../client/bash-tasks.js';
import type { Tool } from '../shared/tool-types.js';
import type { TaskArguments } from './arguments.js';
import { bashKillDescription } from './descriptions.js';
import { createTaskTool } from './task-tool.js';

export const killedTask = (taskId: string) => `killed background task ${taskId}`;
export const alreadyFinished = (taskId: string) => `task ${taskId} had already finished`;
export const killPending = (taskId: string) =>
  `kill of background task ${taskId} is pending: no worker on its host is answering; it takes effect as soon as one is back`;

export interface BashKillOptions {
  /**
   * The calling session takes its tasks' notices where this tool answers it (a host with
   * `agentTaskQueue`, an agent workflow told of its tasks' ends): a task it kills sends it no
   * completion notice, since the kill's answer says the task ended. @default false: every end is
   * noticed (`durable-bash kill`, an operator's, answers a person)
   */
  answersSession?: boolean;
}

/** The `bash_kill` tool: ends a background task's process group, behind the ownership fence. */
export function createBashKillTool(tasks: BashTasks, options: BashKillOptions = {}): Tool<TaskArguments> {
  const answersSession = options.answersSession === true;
  return createTaskTool({
    name: 'bash_kill',
    description: bashKillDescription,
    verb: 'Kill background task',
    run: async (taskId, callerSessionId) => {
      const outcome = await tasks.kill(taskId, callerSessionId, { answersSession });
      if (outcome === 'pending') return killPending(taskId);
      return outcome === 'killed' ? killedTask(taskId) : alreadyFinished(taskId);
    },
  });
}
