import { createBashKillTool } from '../tools/bash-kill.js';
import type { ServerOptions } from './options.js';
import { printResult } from './print-result.js';
import { withTasks } from './with-client.js';

export interface KillFlags extends ServerOptions {
  owner: string;
}

/** `durable-bash kill <id>`: the `bash_kill` tool, acting as the owner session. Resolves to the exit code. */
export function runKill(taskId: string, flags: KillFlags): Promise<number> {
  return withTasks(flags, async (tasks) =>
    printResult(
      await createBashKillTool(tasks).execute({ task_id: taskId }, { agent: { sessionId: flags.owner } }),
    ),
  );
}
