import type { AttachedTasks, TaskRuns } from '../command-host/attached-tasks.js';
import type { ExecutorConfig } from '../command-host/executor-config.js';
import type { MonitorSink } from '../command-host/monitor/line-monitor.js';
import { exitWatchOf, type SupervisorNursery } from '../command-host/supervisor/supervisor-nursery.js';
import { ActivityName } from '../shared/activity-names.js';
import { createChooseHost } from './choose-host.js';
import { createReadOutput } from './read-output.js';
import { createReleaseCommand } from './release-command.js';
import { createResolveCommand } from './resolve-command.js';
import { createRunCommand } from './run-command.js';
import { createSetMonitor } from './set-monitor.js';
import { createStopCommand } from './stop-command.js';
import { createWorkspaceFile } from './workspace-files.js';
import { createWriteStdin } from './write-stdin.js';

/** The activities a command worker registers, bound to its executor config. */
export function createCommandActivities(
  config: ExecutorConfig,
  runs: TaskRuns,
  attached: AttachedTasks,
  nursery?: SupervisorNursery,
  monitors?: MonitorSink,
) {
  return {
    resolveCommand: createResolveCommand(config),
    chooseHost: createChooseHost(config),
    runCommand: createRunCommand(config, runs, attached, nursery, monitors),
    stopCommand: createStopCommand(config, attached, nursery && exitWatchOf(nursery), monitors),
    writeStdin: createWriteStdin(config, attached.terminals),
    readOutput: createReadOutput(config, attached),
    releaseCommand: createReleaseCommand(attached),
    workspaceFile: createWorkspaceFile(config),
    setMonitor: createSetMonitor(config, attached),
  };
}

export type CommandActivities = ReturnType<typeof createCommandActivities>;

// The names histories record live in shared/activity-names.ts, checked here both ways: adding,
// removing or renaming an activity without them fails to compile.
ActivityName satisfies { readonly [Name in keyof CommandActivities]: Name };
({}) as CommandActivities satisfies { [Name in keyof typeof ActivityName]: unknown };
