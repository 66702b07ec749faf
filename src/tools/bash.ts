import os from 'node:os';
import path from 'node:path';
import type { BackgroundQuota } from '../client/background-quota.js';
import type { BashTasks } from '../client/bash-tasks.js';
import { checkPermission, type PermissionOptions } from '../policy/permission-gate.js';
import { type BashArguments, bashArguments, parseArguments, toInputSchema } from './arguments.js';
import { bashDescription } from './descriptions.js';
import { errorResult } from './error-result.js';
import { presentBashCall, presentBashResult } from './present.js';
import { renderRun } from './render.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from './types.js';

export const backgroundStarted = (taskId: string) => `started background task ${taskId}`;

/** What may stop a `bash` call before it starts: the permission policy and the background quota. */
export interface BashGuards extends PermissionOptions {
  /** Caps each session's running background tasks. @default no cap */
  quota?: BackgroundQuota;
}

/**
 * The `bash` tool: validates, asks the permission policy (and the quota, for a background run),
 * starts one workflow per run, and renders what the model sees.
 */
export function createBashTool(tasks: BashTasks, guards: BashGuards = {}): Tool<BashArguments> {
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
        const sessionId = exec.agent?.sessionId;
        await checkPermission({ command: call.command, workdir, background, sessionId }, guards, exec.signal);
        const start = () =>
          tasks.start({
            command: call.command,
            description: call.description,
            background,
            ...(workdir !== undefined ? { workdir } : {}),
            ...(call.timeoutMs !== undefined && !background ? { timeoutMs: call.timeoutMs } : {}),
            ...(sessionId !== undefined ? { owner: sessionId } : {}),
          });
        const taskId =
          background && sessionId !== undefined && guards.quota !== undefined
            ? await guards.quota.start(sessionId, start)
            : await start();
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
