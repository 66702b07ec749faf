/** The stop activity: a kill for the command's host while no attempt follows the command. */
import { Context } from '@temporalio/activity';
import type { AttachedTasks } from '../command-host/attached-tasks.js';
import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import type { MonitorSink } from '../command-host/monitor/line-monitor.js';
import type { ExitWatch } from '../command-host/supervisor/command-end.js';
import { stopCommandOnHost } from '../command-host/supervisor/command-stop.js';
import type { CommandSpec, StopResult } from '../shared/task.js';

/**
 * Stops a command when no attempt of the command activity is running to hear a kill (its host's
 * worker was down): cancelling such an activity completes on the server and reaches no worker, so
 * the kill comes to the host as an activity of its own. Ends the process group (SIGTERM through
 * the supervisor, SIGKILL after the grace) and returns the recorded end; a task no supervisor ever
 * claimed gets a tombstone, so no attempt can start it later.
 */
export function createStopCommand(
  config: CompiledExecutorOptions,
  attached: AttachedTasks,
  watch?: ExitWatch,
  monitors?: MonitorSink,
) {
  return async function stopCommand(spec: CommandSpec): Promise<StopResult> {
    return stopCommandOnHost(
      { config, attached, watch, ...(monitors ? { monitors } : {}) },
      spec,
      Context.current().log,
    );
  };
}
