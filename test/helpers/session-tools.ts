/** A session's tools in its workdir, each answering its text: how the containment tests drive a session. */
import type { Client } from '@temporalio/client';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from './background-task.js';
import { agent, text, toolsByName } from './tool-calls.js';

export interface SessionTools {
  /** Runs `command` in the foreground; its answer. */
  run(command: string): Promise<string>;
  /** Starts `command` in the background; the task's id. */
  start(command: string): Promise<string>;
  read(taskId: string): Promise<string>;
  kill(taskId: string): Promise<string>;
}

/** The tools of session `sessionId` on `taskQueue`, in `workdir`. */
export function sessionTools(
  where: { client: Client; taskQueue: string; workdir: string },
  sessionId: string,
): SessionTools {
  const tools = toolsByName(createBashTools({ client: where.client, taskQueue: where.taskQueue }));
  const exec = agent(sessionId);
  const { workdir } = where;
  return {
    run: async (command) =>
      text(await tools.bash.execute({ command, description: 'In the session', workdir }, exec)),
    start: (command) =>
      startBackground(tools.bash, command, exec, { description: 'In the session', workdir }),
    read: async (taskId) => text(await tools.bash_output.execute({ task_id: taskId }, exec)),
    kill: async (taskId) => text(await tools.bash_kill.execute({ task_id: taskId }, exec)),
  };
}
