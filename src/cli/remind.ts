import { BashTasks } from '../client/bash-tasks.js';
import { Reminders } from '../client/reminders.js';
import { DEFAULT_NOTICE_WINDOW_MS } from '../shared/limits.js';
import { createBashRemindTool } from '../tools/bash-remind.js';
import type { CodecFlags } from './codec-options.js';
import type { ServerOptions } from './options.js';
import { printResult } from './print-result.js';
import { withClient } from './with-client.js';

export interface RemindFlags extends ServerOptions, CodecFlags {
  owner: string;
  /** The agent host's queue the reminder's notice goes to (the `agentTaskQueue` of its tools). */
  agentTaskQueue?: string;
  afterMs?: number;
  /** Tasks whose ends, all of them, fire it sooner. */
  task?: string[];
  /** Cancel this reminder instead. */
  cancel?: string;
}

/**
 * `durable-bash remind`: the `bash_remind` tool as the owner session, its notice going to the agent
 * host on `--agent-task-queue` (without one, setting is refused in one line; cancelling needs none).
 * Prints what the model would see; resolves to the exit code.
 */
export function runRemind(words: string[], flags: RemindFlags): Promise<number> {
  return withClient(flags, async (client) => {
    const tasks = new BashTasks({ client, taskQueue: flags.taskQueue });
    const { agentTaskQueue } = flags;
    const reminders = new Reminders({
      tasks,
      noticeFor: (owner) =>
        agentTaskQueue === undefined
          ? undefined
          : { sessionId: owner, taskQueue: agentTaskQueue, windowMs: DEFAULT_NOTICE_WINDOW_MS },
    });
    const args =
      flags.cancel !== undefined
        ? { cancel: flags.cancel }
        : {
            ...(flags.afterMs !== undefined ? { after_ms: flags.afterMs } : {}),
            ...(words.length > 0 ? { note: words.join(' ') } : {}),
            ...(flags.task?.length ? { task_ids: flags.task } : {}),
          };
    const remind = createBashRemindTool(reminders);
    return printResult(await remind.execute(args, { agent: { sessionId: flags.owner } }));
  });
}
