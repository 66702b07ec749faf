import { compileExecutorOptions, type ExecutorOptions } from './executor-config.js';
import { createResolveCommand } from './resolve-command.js';
import { createRunCommand } from './run-command.js';

export type { ExecutorConfig, ExecutorOptions } from './executor-config.js';
export { CommandFailureType } from './run-command.js';

/** The activities a command worker registers, bound to its executor config. */
export function createCommandActivities(options: ExecutorOptions = {}) {
  const config = compileExecutorOptions(options);
  return {
    resolveCommand: createResolveCommand(config),
    runCommand: createRunCommand(config),
  };
}

export type CommandActivities = ReturnType<typeof createCommandActivities>;
