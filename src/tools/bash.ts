import os from 'node:os';
import path from 'node:path';
import type { BashTasks } from '../client/bash-tasks.js';
import { type BashArguments, bashArguments, parseArguments, toInputSchema } from './arguments.js';
import { bashDescription } from './descriptions.js';
import { errorResult } from './error-result.js';
import { presentBashCall, presentBashResult } from './present.js';
import { renderRun } from './render.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from './types.js';

export const backgroundStarted = (taskId: string) => `started background task ${taskId}`;

/** The `bash` tool: validates, starts one workflow per run, and renders what the model sees. */
export function createBashTool(tasks: BashTasks): Tool<BashArguments> {
  return {
    name: 'bash',
    description: bashDescription,
    parameters: bashArguments,
    inputSchema: toInputSchema(bashArguments),
    presentCall: presentBashCall,
    presentResult: presentBashResult,
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const call = parseArguments(bashArguments, args);
        const background = call.run_in_background === true;
        const workdir = resolveWorkdir(call.workdir, exec.agent?.cwd);
        const taskId = await tasks.start({
          command: call.command,
          description: call.description,
          background,
          ...(workdir !== undefined ? { workdir } : {}),
          ...(call.timeoutMs !== undefined && !background ? { timeoutMs: call.timeoutMs } : {}),
          ...(exec.agent ? { owner: exec.agent.sessionId } : {}),
        });
        if (background) return textResult(backgroundStarted(taskId));
        return textResult(renderRun(await tasks.result(taskId, exec.signal), os.hostname()));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/**
 * Absolute workdirs stand as given; a relative one is taken against the session's cwd. With no
 * session cwd, the worker resolves what is left against its own default.
 */
function resolveWorkdir(workdir: string | undefined, sessionCwd: string | undefined): string | undefined {
  if (sessionCwd === undefined) return workdir;
  return path.resolve(sessionCwd, workdir ?? '.');
}
