/** Argument schemas for the tools, and the one-line error a bad call gets. */
import { z } from 'zod';
import { InvalidArgumentsError } from '../errors.js';

/** A short, exact description of a value, for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

const nonBlankString = (what: string) =>
  z
    .string({ error: (issue) => `expected ${what}, got ${describeValue(issue.input)}` })
    .refine((value) => value.trim() !== '', {
      error: (issue) => `expected ${what}, got ${describeValue(issue.input)}`,
    });

export const bashArguments = z.strictObject({
  command: nonBlankString('a non-blank string').describe('The command to run with bash -c.'),
  description: nonBlankString('a non-blank string').describe(
    'One-line, active-voice summary of the command (5-10 words), for display only.',
  ),
  timeoutMs: z
    .number({ error: (issue) => `expected a positive number, got ${describeValue(issue.input)}` })
    .refine((value) => Number.isFinite(value) && value > 0, {
      error: (issue) => `expected a positive number, got ${describeValue(issue.input)}`,
    })
    .optional()
    .describe('Timeout in milliseconds; the worker applies its default and cap. Foreground only.'),
  workdir: nonBlankString('a non-empty path')
    .optional()
    .describe("Working directory; a relative path is resolved against the session's cwd."),
  run_in_background: z
    .boolean({ error: (issue) => `expected a boolean, got ${describeValue(issue.input)}` })
    .optional()
    .describe('Return a task id at once and run without a timeout; read output with bash_output.'),
});
export type BashArguments = z.infer<typeof bashArguments>;

/** Parses a tool's arguments or throws one line naming each bad field. */
export function parseArguments<T>(schema: z.ZodType<T>, args: unknown): T {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new InvalidArgumentsError(`invalid arguments: expected an object, got ${describeValue(args)}`);
  }
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  throw new InvalidArgumentsError(parsed.error.issues.map(issueLine).join('; '));
}

function issueLine(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown argument${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  return `invalid ${issue.path.join('.') || 'arguments'}: ${issue.message}`;
}

/** JSON Schema for a tool's parameters, as harnesses that speak JSON Schema expect. */
export function toInputSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

export const taskArguments = z.strictObject({
  task_id: nonBlankString('a non-blank task id').describe('The id that bash returned for a background task.'),
});
export type TaskArguments = z.infer<typeof taskArguments>;
