/** The monitor activity: `bash_monitor`'s pattern, set on the task's host (its control queue). */
import type { AttachedTasks } from '../command-host/attached-tasks.js';
import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import { setMonitorOnHost } from '../command-host/monitor/monitor-setting.js';
import type { SetMonitorAnswer, SetMonitorRequest } from '../shared/monitor.js';

export function createSetMonitor(config: Pick<CompiledExecutorOptions, 'spillDir'>, attached: AttachedTasks) {
  return async function setMonitor(request: SetMonitorRequest): Promise<SetMonitorAnswer> {
    return setMonitorOnHost(config.spillDir, attached, request);
  };
}
