import os from 'node:os';
import type { BashTasks } from '../client/bash-tasks.js';
import { DEFAULT_MAX_WAIT_MS } from '../shared/limits.js';
import type { Tool } from '../shared/tool-types.js';
import { type BashOutputArguments, bashOutputArguments } from './arguments.js';
import { bashOutputDescription } from './descriptions.js';
import { keepMatchingLines } from './line-filter.js';
import { presentOutputCall } from './present.js';
import { renderOutputRead } from './render-read.js';
import { createTaskTool } from './task-tool.js';

const OUTPUT_VERB = 'Read output from background task';

export interface BashOutputOptions {
  /** The longest a call's `wait_ms` may wait; a longer one is cut to it. @default DEFAULT_MAX_WAIT_MS (2 minutes) */
  maxWaitMs?: number;
}

/**
 * The `bash_output` tool: what a background task printed since the last read, behind the ownership
 * fence. With `wait_ms`, a read of a running task with nothing new waits on the task's host (see
 * `BashTasks.read`, for a matching line when filtered); with `filter`, only matching lines
 * are shown, and all are read.
 */
export function createBashOutputTool(
  tasks: BashTasks,
  options: BashOutputOptions = {},
): Tool<BashOutputArguments> {
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  if (!(maxWaitMs >= 0)) throw new RangeError(`maxWaitMs must be a number of milliseconds, got ${maxWaitMs}`);
  return createTaskTool({
    name: 'bash_output',
    description: bashOutputDescription,
    verb: OUTPUT_VERB,
    parameters: bashOutputArguments,
    presentCall: (args) => presentOutputCall(OUTPUT_VERB, args),
    run: async (taskId, callerSessionId, args, exec) => {
      const waitMs = Math.min(args.wait_ms ?? 0, maxWaitMs);
      const filter = args.filter === undefined ? undefined : new RegExp(args.filter);
      // A filter sees whole lines: a line still being written is left for a later read.
      // With a filter, the wait is for a line it matches (or one it cannot be applied to).
      const wanted = filter && ((text: string) => keepMatchingLines(text, filter).text !== '');
      const read = await tasks.read(taskId, callerSessionId, {
        wholeLines: filter !== undefined,
        ...(args.scrollback === true ? { terminal: 'scrollback' as const } : {}),
        ...(waitMs > 0 ? { waitMs, ...(wanted ? { wanted } : {}) } : {}),
        ...(exec.signal ? { signal: exec.signal } : {}),
      });
      return renderOutputRead(read, os.hostname(), filter, args.max_output_tokens);
    },
  });
}
