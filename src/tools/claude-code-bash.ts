/**
 * The `bash` tool with Claude Code's Bash arguments (claude-code-bash-arguments.ts): the call is
 * mapped onto durable-bash's and run as the `bash` tool runs it, so every answer is the tool's own text.
 */
import type { BashTasks } from '../client/bash-tasks.js';
import { positiveOption } from '../shared/checks.js';
import { errorResult } from '../shared/error-result.js';
import { InvalidArgumentsError } from '../shared/errors.js';
import type { Tool, ToolExecContext, ToolResult } from '../shared/tool-types.js';
import { toInputSchema } from './arguments.js';
import { type BashToolOptions, runBashCall } from './bash.js';
import {
  type ClaudeCodeBashArguments,
  claudeCodeBashArguments,
  parseClaudeCodeBashCall,
} from './claude-code-bash-arguments.js';
import { autoBackgroundDescription, claudeCodeBashDescription } from './descriptions.js';
import { presentBashCall, presentBashResult } from './present.js';

/** The `bash` tool for a Claude Code host that routes its Bash here. */
export function createClaudeCodeBashTool(
  tasks: BashTasks,
  guards: BashToolOptions = {},
): Tool<ClaudeCodeBashArguments> {
  const { autoBackgroundAfterMs } = guards;
  if (autoBackgroundAfterMs !== undefined) positiveOption('autoBackgroundAfterMs', autoBackgroundAfterMs);
  return {
    name: 'bash',
    description:
      autoBackgroundAfterMs === undefined
        ? claudeCodeBashDescription
        : claudeCodeBashDescription + autoBackgroundDescription(autoBackgroundAfterMs),
    parameters: claudeCodeBashArguments,
    inputSchema: toInputSchema(claudeCodeBashArguments),
    presentCall: (args) => presentBashCall(asDurableBash(args)),
    presentResult: (args, result) => presentBashResult(asDurableBash(args), result),
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        return await runBashCall(tasks, guards, parseClaudeCodeBashCall(args), exec);
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/** The call as durable-bash's arguments, for the views; as it came when it does not parse (a generic view). */
function asDurableBash(args: unknown): unknown {
  try {
    const { backgroundTimeoutMs: _limit, ...call } = parseClaudeCodeBashCall(args);
    return call;
  } catch (err) {
    if (err instanceof InvalidArgumentsError) return args;
    throw err;
  }
}
