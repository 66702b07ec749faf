import os from 'node:os';
import path from 'node:path';
import type { BackgroundQuota } from '../client/background-quota.js';
import type { BashTasks } from '../client/bash-tasks.js';
import type { StartRequest } from '../client/task-start.js';
import { checkPermission, type PermissionOptions } from '../policy/permission-gate.js';
import { positiveOption } from '../shared/checks.js';
import { errorResult } from '../shared/error-result.js';
import { backgroundStarted, renderMovedRun, renderRun } from '../shared/render.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from '../shared/tool-types.js';
import {
  type BashArguments,
  bashArguments,
  DEFAULT_TERMINAL,
  parseArguments,
  toInputSchema,
} from './arguments.js';
import { autoBackgroundDescription, bashDescription } from './descriptions.js';
import { presentBashCall, presentBashResult } from './present.js';

/** What may stop a `bash` call before it starts: the permission policy and the background quota. */
export interface BashGuards extends PermissionOptions {
  /** Caps each session's running background tasks. @default no cap */
  quota?: BackgroundQuota;
}

/** The `bash` tool's options: its guards, and when a foreground run moves to the background. */
export interface BashToolOptions extends BashGuards {
  /**
   * A foreground call still running after this long answers with the output so far and moves its run
   * to the background (same owner, completion notice, no timeout any more). @default never
   */
  autoBackgroundAfterMs?: number;
}

/**
 * The `bash` tool: validates, asks the permission policy (and the quota, for a background run),
 * starts one workflow per run, and renders what the model sees.
 */
export function createBashTool(tasks: BashTasks, guards: BashToolOptions = {}): Tool<BashArguments> {
  const { autoBackgroundAfterMs, quota } = guards;
  if (autoBackgroundAfterMs !== undefined) positiveOption('autoBackgroundAfterMs', autoBackgroundAfterMs);
  return {
    name: 'bash',
    description:
      autoBackgroundAfterMs === undefined
        ? bashDescription
        : bashDescription + autoBackgroundDescription(autoBackgroundAfterMs),
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
        const start = () => tasks.start(startRequest(call, workdir, sessionId));
        const taskId =
          background && sessionId !== undefined && quota !== undefined
            ? await quota.start(sessionId, start)
            : await start();
        if (background) return textResult(backgroundStarted(taskId));
        const ended = await tasks.foregroundResult(taskId, {
          ...(exec.signal !== undefined ? { signal: exec.signal } : {}),
          ...(autoBackgroundAfterMs !== undefined ? { autoBackgroundAfterMs } : {}),
          ...(sessionId !== undefined ? { owner: sessionId } : {}),
          ...(sessionId !== undefined && quota !== undefined
            ? { admitMove: (move: () => Promise<boolean>) => quota.move(sessionId, taskId, move) }
            : {}),
        });
        if (ended.kind === 'moved') {
          return textResult(renderMovedRun(ended.read, taskId, ended.afterMs, os.hostname()));
        }
        return textResult(renderRun(ended.result, os.hostname()));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/** The run a `bash` call asks for (with its workdir resolved), as the client starts it. */
export function startRequest(
  call: BashArguments,
  workdir: string | undefined,
  owner: string | undefined,
): StartRequest {
  const background = call.run_in_background === true;
  return {
    command: call.command,
    description: call.description,
    background,
    ...(workdir !== undefined ? { workdir } : {}),
    ...(call.timeoutMs !== undefined && !background ? { timeoutMs: call.timeoutMs } : {}),
    ...(owner !== undefined ? { owner } : {}),
    ...(call.keep_stdin_open === true ? { keepStdinOpen: true } : {}),
    ...(call.tty === true
      ? { terminal: { cols: call.cols ?? DEFAULT_TERMINAL.cols, rows: call.rows ?? DEFAULT_TERMINAL.rows } }
      : {}),
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
