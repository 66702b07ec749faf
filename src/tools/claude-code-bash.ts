/**
 * The `bash` tool with Claude Code's Bash arguments (claude-code-bash-arguments.ts): the call is
 * mapped onto durable-bash's and run as the `bash` tool runs it, so every answer is the tool's own text.
 */
import type { BashTasks } from '../client/bash-tasks.js';
import { InvalidArgumentsError } from '../shared/errors.js';
import type { Tool } from '../shared/tool-types.js';
import { type BashToolOptions, createBashToolOfShape } from './bash.js';
import {
  type ClaudeCodeBashArguments,
  claudeCodeBashArguments,
  parseClaudeCodeBashCall,
} from './claude-code-bash-arguments.js';
import { claudeCodeBashDescription } from './descriptions.js';

/** The `bash` tool for a Claude Code host that routes its Bash here. */
export function createClaudeCodeBashTool(
  tasks: BashTasks,
  guards: BashToolOptions = {},
): Tool<ClaudeCodeBashArguments> {
  return createBashToolOfShape(tasks, guards, {
    description: claudeCodeBashDescription,
    parameters: claudeCodeBashArguments,
    parse: parseClaudeCodeBashCall,
    asBashArguments: asDurableBash,
  });
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
