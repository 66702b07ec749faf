import { compileExecutorOptions, type ExecutorOptions } from './executor-config.js';
import { createResolveCommand } from './resolve-command.js';
import { createRunCommand } from './run-command.js';

export type { ExecutorConfig, ExecutorOptions } from './executor-config.js';

/** The activities a command worker registers, bound to its executor config. */
export function createCommandActivities(options: ExecutorOptions, taskQueue: string) {
  const config = compileExecutorOptions(options, taskQueue);
  return {
    resolveCommand: createResolveCommand(config),
    runCommand: createRunCommand(config),
  };
}

export type CommandActivities = ReturnType<typeof createCommandActivities>;
