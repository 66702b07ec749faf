/**
 * Claude Code's Bash arguments (`command`, `timeout`, `description`, `run_in_background`,
 * `dangerouslyDisableSandbox`), as the model writes them for Claude Code's own Bash, and their
 * mapping onto durable-bash's: what the `bash` tool takes when a Claude Code host routes its Bash
 * here (the Agent SDK's `toolAliases`, which hands the model's Bash input over unchecked).
 */
import { z } from 'zod';
import {
  CLAUDE_CODE_DEFAULT_TIMEOUT_MS,
  CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS,
  CLAUDE_CODE_MAX_TIMEOUT_MS,
} from '../shared/limits.js';
import { type BashArguments, bashArguments, describeValue, parseArguments } from './arguments.js';
import type { BashCall } from './bash.js';

/** Which arguments the `bash` tool takes: durable-bash's own, or Claude Code's Bash's. */
export const BashArgumentsShape = { durableBash: 'durable-bash', claudeCode: 'claude-code' } as const;
export type BashArgumentsShape = (typeof BashArgumentsShape)[keyof typeof BashArgumentsShape];

/** A description made from the command keeps at most this many characters of its first line: a display line. */
const DERIVED_DESCRIPTION_CHARS = 80;

const timeoutProblem = (value: unknown) =>
  `expected a positive number of milliseconds, got ${describeValue(value)}`;

export const claudeCodeBashArguments = z
  .strictObject({
    command: bashArguments.shape.command.describe('The command to execute'),
    timeout: z
      .number({ error: (issue) => timeoutProblem(issue.input) })
      .refine((value) => Number.isFinite(value) && value > 0, {
        error: (issue) => timeoutProblem(issue.input),
      })
      .optional()
      .describe(
        `Optional timeout in milliseconds (max ${CLAUDE_CODE_MAX_TIMEOUT_MS} for a foreground command; default ${CLAUDE_CODE_DEFAULT_TIMEOUT_MS})`,
      ),
    description: z
      .string({ error: (issue) => `expected a string, got ${describeValue(issue.input)}` })
      .optional()
      .describe(
        'Clear, concise description of what this command does in active voice (5-10 words), for display only.',
      ),
    run_in_background: z
      .boolean({ error: (issue) => `expected a boolean, got ${describeValue(issue.input)}` })
      .optional()
      .describe(
        `Set to true to run this command in the background as a durable task: the call answers with its task id at once. With it, \`timeout\` limits how long the command may run before it is stopped (max ${CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS} ms); without one it runs until it ends.`,
      ),
    dangerouslyDisableSandbox: z
      .boolean({ error: (issue) => `expected a boolean, got ${describeValue(issue.input)}` })
      .optional()
      .describe("Not available: every command runs in its session's isolation. Only false is taken."),
  })
  .superRefine((call, context) => {
    const problem = (path: string, message: string, input: unknown) =>
      context.addIssue({ code: 'custom', path: [path], message, input });
    if (call.timeout !== undefined && Number.isFinite(call.timeout)) {
      if (call.run_in_background === true) {
        if (call.timeout > CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS)
          problem(
            'timeout',
            `${call.timeout} is over ${CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS} ms, the most a background command may be given; leave timeout out to run it until it ends`,
            call.timeout,
          );
      } else if (call.timeout > CLAUDE_CODE_MAX_TIMEOUT_MS)
        problem(
          'timeout',
          `${call.timeout} is over ${CLAUDE_CODE_MAX_TIMEOUT_MS} ms, the most a foreground command may take; set run_in_background: true to run longer`,
          call.timeout,
        );
    }
    if (call.dangerouslyDisableSandbox === true)
      problem(
        'dangerouslyDisableSandbox',
        "not available: every command runs in its session's isolation, which nothing turns off; call again without it",
        true,
      );
  });
export type ClaudeCodeBashArguments = z.infer<typeof claudeCodeBashArguments>;

/**
 * Parses Claude Code's Bash arguments into the call durable-bash's `bash` runs, or throws one line
 * naming each bad field (the `bash` tool's own lines for `command` and `description`):
 * - a foreground `timeout` is `timeoutMs`, CLAUDE_CODE_DEFAULT_TIMEOUT_MS when absent;
 * - a background `timeout` is the task's time limit; absent, the task runs until it ends;
 * - an absent or blank `description` is made from the command's first line.
 */
export function parseClaudeCodeBashCall(args: unknown): BashCall {
  const call = parseArguments(claudeCodeBashArguments, args);
  const background = call.run_in_background === true;
  const description =
    call.description !== undefined && call.description.trim() !== ''
      ? call.description
      : descriptionOf(call.command);
  const mapped: BashArguments = parseArguments(bashArguments, {
    command: call.command,
    description,
    ...(background ? { run_in_background: true } : {}),
    ...(background ? {} : { timeoutMs: call.timeout ?? CLAUDE_CODE_DEFAULT_TIMEOUT_MS }),
  });
  return background && call.timeout !== undefined ? { ...mapped, backgroundTimeoutMs: call.timeout } : mapped;
}

/** A display line for a command given without a description: its first non-blank line, cut. */
export function descriptionOf(command: string): string {
  const line = command.split(/\r?\n/).find((candidate) => candidate.trim() !== '') ?? command;
  const trimmed = line.trim();
  const chars = Array.from(trimmed);
  return chars.length <= DERIVED_DESCRIPTION_CHARS
    ? trimmed
    : `${chars.slice(0, DERIVED_DESCRIPTION_CHARS - 1).join('')}…`;
}
