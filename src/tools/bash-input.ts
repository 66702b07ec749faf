import type { BashTasks } from '../client/bash-tasks.js';
import { StdinWriteError } from '../shared/errors.js';
import { STDIN_HOST_WAIT_MS } from '../shared/limits.js';
import { noTerminal, type StdinWriteResult } from '../shared/stdin.js';
import type { TerminalSize } from '../shared/terminal.js';
import type { Tool } from '../shared/tool-types.js';
import { type BashInputArguments, bashInputArguments } from './arguments.js';
import { bashInputDescription } from './descriptions.js';
import { presentInputCall } from './present.js';
import { createTaskTool } from './task-tool.js';

const INPUT_VERB = 'Send input to background task';

const bytes = (count: number) => `${count} byte${count === 1 ? '' : 's'}`;

/** The line the model sees for what the host did, or the refusal it throws (nothing was written). */
export function inputText(
  taskId: string,
  result: StdinWriteResult,
  close: boolean,
  size?: TerminalSize,
): string {
  const resized = size && `resized the terminal of task ${taskId} to ${size.cols}x${size.rows}`;
  const after = (text: string) => (resized ? `${resized}; ${text}` : text);
  switch (result.kind) {
    case 'written':
      if (result.bytes === 0 && resized && !close) return resized;
      if (result.bytes === 0) return after(`closed the stdin of task ${taskId}`);
      if (close && !result.closed)
        return after(
          `wrote ${bytes(result.bytes)} to the stdin of task ${taskId}; its stdin could not be closed (its command is ending)`,
        );
      return after(
        `wrote ${bytes(result.bytes)} to the stdin of task ${taskId}${result.closed ? ' and closed it' : ''}`,
      );
    case 'partial':
      return after(
        `wrote ${result.bytes} of ${bytes(result.total)} to the stdin of task ${taskId}: the command is not reading it, and the rest did not fit${close ? '; its stdin stays open' : ''}`,
      );
    case 'closed':
      throw new StdinWriteError(`the stdin of task ${taskId} is closed; nothing was written`);
    case 'ended':
      throw new StdinWriteError(`task ${taskId} has ended; nothing was written`);
    case 'not-started':
      throw new StdinWriteError(`task ${taskId} has not started its command yet; nothing was written`);
    case 'expired':
      throw new StdinWriteError(
        `the write to task ${taskId} waited ${result.waitedMs}ms behind earlier writes to a stdin that is not being read; nothing was written`,
      );
    case 'no-terminal':
      throw new StdinWriteError(noTerminal(taskId));
    case 'no-host':
      throw new StdinWriteError(
        `no worker on the host of task ${taskId} took the write within ${STDIN_HOST_WAIT_MS}ms; nothing was written`,
      );
  }
}

/**
 * The `bash_input` tool: writes text and keys to the stdin of a background task started with
 * `keep_stdin_open`, or types them into the terminal of a task run with `tty` (which it may also
 * resize).
 */
export function createBashInputTool(tasks: BashTasks): Tool<BashInputArguments> {
  return createTaskTool({
    name: 'bash_input',
    description: bashInputDescription,
    verb: INPUT_VERB,
    parameters: bashInputArguments,
    presentCall: (args) => presentInputCall(INPUT_VERB, args),
    run: async (taskId, callerSessionId, args) => {
      const close = args.close === true;
      const size =
        args.cols !== undefined && args.rows !== undefined ? { cols: args.cols, rows: args.rows } : undefined;
      const write = {
        text: args.text ?? '',
        close,
        ...(args.keys?.length ? { keys: args.keys } : {}),
        ...(size ? { size } : {}),
      };
      return inputText(taskId, await tasks.writeStdin(taskId, callerSessionId, write), close, size);
    },
  });
}
