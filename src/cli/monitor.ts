import { BashTasks } from '../client/bash-tasks.js';
import { TaskMonitors } from '../client/task-monitors.js';
import { DEFAULT_NOTICE_WINDOW_MS } from '../shared/limits.js';
import { createBashMonitorTool } from '../tools/bash-monitor.js';
import type { CodecFlags } from './codec-options.js';
import type { ServerOptions } from './options.js';
import { printResult } from './print-result.js';
import { withClient } from './with-client.js';

export interface MonitorFlags extends ServerOptions, CodecFlags {
  owner: string;
  /** The agent host's queue the monitor's notices go to (the `agentTaskQueue` of its tools). */
  agentTaskQueue?: string;
  /** Clear the task's monitor instead. */
  clear?: boolean;
}

/**
 * `durable-bash monitor`: the `bash_monitor` tool as the owner session, its notices going to the
 * agent host on `--agent-task-queue` (without one, nothing is set and it says so in one line).
 * Prints what the model would see; resolves to the exit code.
 */
export function runMonitor(
  taskId: string,
  pattern: string | undefined,
  flags: MonitorFlags,
): Promise<number> {
  return withClient(flags, async (client) => {
    const tasks = new BashTasks({ client, taskQueue: flags.taskQueue });
    const { agentTaskQueue } = flags;
    const monitors = new TaskMonitors({
      tasks,
      noticeFor: (owner) =>
        agentTaskQueue === undefined
          ? undefined
          : { sessionId: owner, taskQueue: agentTaskQueue, windowMs: DEFAULT_NOTICE_WINDOW_MS },
    });
    const args = { task_id: taskId, notify_on: flags.clear === true ? null : (pattern ?? '') };
    const monitor = createBashMonitorTool(monitors);
    return printResult(await monitor.execute(args, { agent: { sessionId: flags.owner } }));
  });
}
