import { createChooseHost } from './choose-host.js';
import type { ExecutorConfig } from './executor-config.js';
import { createReadOutput } from './read-output.js';
import { createReleaseCommand } from './release-command.js';
import { createResolveCommand } from './resolve-command.js';
import { type AttachedTasks, createRunCommand, exitWatchOf, type TaskRuns } from './run-command.js';
import { createStopCommand } from './stop-command.js';
import type { SupervisorNursery } from './supervisor-nursery.js';
import { createWriteStdin } from './write-stdin.js';

export type { ExecutorConfig, ExecutorOptions } from './executor-config.js';
export { compileExecutorOptions } from './executor-config.js';
export { type AttachedAttempt, AttachedTasks, type TaskRuns } from './run-command.js';

/** The activities a command worker registers, bound to its executor config. */
export function createCommandActivities(
  config: ExecutorConfig,
  runs: TaskRuns,
  attached: AttachedTasks,
  nursery?: SupervisorNursery,
) {
  return {
    resolveCommand: createResolveCommand(config),
    chooseHost: createChooseHost(config),
    runCommand: createRunCommand(config, runs, attached, nursery),
    stopCommand: createStopCommand(config, attached, nursery && exitWatchOf(nursery)),
    writeStdin: createWriteStdin(config, attached.terminals),
    readOutput: createReadOutput(config, attached),
    releaseCommand: createReleaseCommand(attached),
  };
}

export type CommandActivities = ReturnType<typeof createCommandActivities>;
