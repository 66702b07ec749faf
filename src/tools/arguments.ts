/** Argument schemas for the tools, and the one-line error a bad call gets. */
import { z } from 'zod';
import { InvalidArgumentsError } from '../shared/errors.js';
import {
  MAX_COMMAND_BYTES,
  MAX_DESCRIPTION_BYTES,
  MAX_FILTER_BYTES,
  MAX_HOST_RESTARTS,
  MAX_INPUT_BYTES,
  MAX_MONITOR_PATTERN_CHARS,
  MAX_REMINDER_AFTER_MS,
  MAX_REMINDER_NOTE_BYTES,
  MAX_REMINDER_TASKS,
  MAX_WORKDIR_BYTES,
} from '../shared/limits.js';
import { monitorPatternProblem } from '../shared/monitor-pattern.js';
import { BYTES_PER_TOKEN, MAX_OUTPUT_TOKENS } from '../shared/output-budget.js';
import { isReminderIdShape } from '../shared/reminder.js';
import { isTaskIdShape } from '../shared/task-id.js';
import { keyProblem } from '../shared/terminal-keys.js';

/** The most keys one `bash_input` call presses. */
const MAX_KEYS = 256;

/**
 * A string's length in UTF-8 bytes, a lone surrogate counting as the 3 of U+FFFD (as Node's
 * `Buffer.byteLength` counts it): no `Buffer`, which workflow code lacks.
 */
const utf8 = new TextEncoder();
const utf8Bytes = (value: string): number => utf8.encode(value).length;

/** A short, exact description of a value, for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    const quoted = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    // JSON escapes every control character but these, which some renderers also break lines at.
    return quoted.replace(
      /[\u0085\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  return String(value);
}

/**
 * A required string field: a string, then the first rule `problemOf` finds it breaks, so each bad
 * field gets exactly one message.
 */
const requiredString = (what: string, problemOf: (value: string) => string | undefined) =>
  z
    .string({ error: (issue) => `expected ${what}, got ${describeValue(issue.input)}` })
    .superRefine((value, context) => {
      const problem =
        value.trim() === '' ? `expected ${what}, got ${describeValue(value)}` : problemOf(value);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem, input: value });
    });

/**
 * A non-blank string of at most `maxBytes` UTF-8 bytes with no NUL byte: no exec argument or path
 * can hold one (bash would get the command cut short), and the limits keep a call's payloads small.
 */
const nonBlankString = (what: string, maxBytes: number) =>
  requiredString(what, (value) => {
    const bytes = utf8Bytes(value);
    if (bytes > maxBytes) return `${bytes} bytes, over the ${maxBytes}-byte limit`;
    return value.includes('\0') ? 'contains a NUL byte' : undefined;
  });

/** An optional boolean field, with the one message every boolean field gives for another value. */
const optionalBoolean = (description: string) =>
  z
    .boolean({ error: (issue) => `expected a boolean, got ${describeValue(issue.input)}` })
    .optional()
    .describe(description);

/** A terminal's columns or rows: a whole number the supervisor takes (2 to 1000). */
const terminalCells = (what: 'cols' | 'rows') =>
  z
    .number({ error: (issue) => `expected a whole number from 2 to 1000, got ${describeValue(issue.input)}` })
    .refine((value) => Number.isInteger(value) && value >= 2 && value <= 1000, {
      error: (issue) => `expected a whole number from 2 to 1000, got ${describeValue(issue.input)}`,
    })
    .optional()
    .describe(what === 'cols' ? "The terminal's width in columns." : "The terminal's height in rows.");

export const DEFAULT_TERMINAL = { cols: 120, rows: 40 } as const;

/** `max_output_tokens`: a whole number of tokens a tool answer may take (output-budget.ts). */
const maxOutputTokens = (description: string) =>
  z
    .number({ error: (issue) => outputTokensProblem(issue.input) })
    .refine((value) => Number.isInteger(value) && value >= 1 && value <= MAX_OUTPUT_TOKENS, {
      error: (issue) => outputTokensProblem(issue.input),
    })
    .optional()
    .describe(description);

const outputTokensProblem = (value: unknown) =>
  `expected a whole number of tokens from 1 to ${MAX_OUTPUT_TOKENS}, got ${describeValue(value)}`;

/** What `max_output_tokens` does, as both tools' descriptions say it. */
const OUTPUT_BUDGET_TEXT = `the answer takes at most this many tokens (${BYTES_PER_TOKEN} bytes of text a token); longer output keeps its head and tail, with a line between that says how much was cut and where all of it is. Status lines stay whole.`;

/** A monitor's pattern: a line of RE2 syntax (monitor-pattern.ts says why RE2). */
const monitorPattern = requiredString('a pattern', monitorPatternProblem);

/** What a monitor does, as `bash`'s and `bash_monitor`'s descriptions say it. */
const MONITOR_TEXT = `each line of its output that matches this regular expression (RE2 syntax: no lookaround or backreferences; (?i) ignores case) comes to you as a notice, lines close together in one, so you need not poll. At most ${MAX_MONITOR_PATTERN_CHARS} characters.`;

export const bashArguments = z
  .strictObject({
    command: nonBlankString('a non-blank string', MAX_COMMAND_BYTES).describe(
      'The command to run with bash -c.',
    ),
    description: nonBlankString('a non-blank string', MAX_DESCRIPTION_BYTES).describe(
      'One-line, active-voice summary of the command (5-10 words), for display only.',
    ),
    timeoutMs: z
      .number({ error: (issue) => `expected a positive number, got ${describeValue(issue.input)}` })
      .refine((value) => Number.isFinite(value) && value > 0, {
        error: (issue) => `expected a positive number, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe('Timeout in milliseconds; the worker applies its default and cap. Foreground only.'),
    workdir: nonBlankString('a non-empty path', MAX_WORKDIR_BYTES)
      .optional()
      .describe("Working directory; a relative path is resolved against the session's cwd."),
    run_in_background: optionalBoolean(
      'Return a task id at once and run without a timeout; read output with bash_output.',
    ),
    keep_stdin_open: optionalBoolean(
      "Background runs only: keep the command's stdin open, so bash_input can write to it (an interactive program, a REPL). Default: stdin is empty.",
    ),
    tty: optionalBoolean(
      'Run on a terminal (a full-screen program, a prompt that wants one, Ctrl-C): bash_output then shows its screen, and bash_input types text and keys into it. Default: no terminal.',
    ),
    cols: terminalCells('cols').describe(
      `With tty: the terminal's width in columns. Default ${DEFAULT_TERMINAL.cols}.`,
    ),
    rows: terminalCells('rows').describe(
      `With tty: the terminal's height in rows. Default ${DEFAULT_TERMINAL.rows}.`,
    ),
    max_output_tokens: maxOutputTokens(
      `Foreground only: ${OUTPUT_BUDGET_TEXT} Default: all the output the result holds.`,
    ),
    notify_on: monitorPattern
      .optional()
      .describe(`Background runs only: ${MONITOR_TEXT} bash_monitor changes or clears it.`),
    on_host_loss: z
      .enum(['lost', 'restart'], {
        error: (issue) => `expected "lost" or "restart", got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        `Background runs only: what happens if the task's host is lost for good (no worker there within the lost window). "lost" (the default) ends the task lost; "restart" runs the command again from its start on another host, in the same workdir, at most ${MAX_HOST_RESTARTS} times, its output going on after a line [restarted on <host> after <old host> was lost].`,
      ),
  })
  .superRefine((call, context) => {
    for (const field of ['cols', 'rows'] as const)
      if (call[field] !== undefined && call.tty !== true)
        context.addIssue({
          code: 'custom',
          path: [field],
          message: 'a terminal size needs tty: true',
          input: call[field],
        });
    if (call.max_output_tokens !== undefined && call.run_in_background === true)
      context.addIssue({
        code: 'custom',
        path: ['max_output_tokens'],
        message:
          "a background run answers with its task id only; give max_output_tokens to bash_output's reads",
        input: call.max_output_tokens,
      });
    if (call.notify_on !== undefined && call.run_in_background !== true)
      context.addIssue({
        code: 'custom',
        path: ['notify_on'],
        message: 'a monitor watches a background run; set run_in_background: true',
        input: call.notify_on,
      });
    if (call.on_host_loss !== undefined && call.run_in_background !== true)
      context.addIssue({
        code: 'custom',
        path: ['on_host_loss'],
        message: 'on_host_loss is for a background run; set run_in_background: true',
        input: call.on_host_loss,
      });
    if (call.keep_stdin_open === true && call.run_in_background !== true)
      context.addIssue({
        code: 'custom',
        path: ['keep_stdin_open'],
        message: 'stdin stays open only for a background run; set run_in_background: true',
        input: call.keep_stdin_open,
      });
  });
export type BashArguments = z.infer<typeof bashArguments>;

const outputBudgetArguments = z.object({ max_output_tokens: maxOutputTokens('') });

/** A call's `max_output_tokens` alone, checked as the tools check it (one line when bad). */
export function parseOutputBudget(value: unknown): number | undefined {
  return parseArguments(outputBudgetArguments, { max_output_tokens: value }).max_output_tokens;
}

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
    return `unknown argument${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.map(argumentName).join(', ')}`;
  return `invalid ${issue.path.join('.') || 'arguments'}: ${issue.message}`;
}

/** An argument's name as an error shows it: as is when plain, else quoted and cut like a value. */
function argumentName(key: string): string {
  return /^[\w$-]{1,40}$/.test(key) ? key : describeValue(key);
}

/** JSON Schema for a tool's parameters, as harnesses that speak JSON Schema expect. */
export function toInputSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

/** A task id as a call gives it: the shape bash returns. */
const taskIdString = requiredString('a non-blank task id', (value) =>
  isTaskIdShape(value)
    ? undefined
    : `expected an id that bash returned (bash-<uuid>), got ${describeValue(value)}`,
);

export const taskArguments = z.strictObject({
  task_id: taskIdString.describe('The id that bash returned for a background task.'),
});
export type TaskArguments = z.infer<typeof taskArguments>;

export const bashOutputArguments = taskArguments.extend({
  wait_ms: z
    .number({ error: (issue) => `expected a number of milliseconds, got ${describeValue(issue.input)}` })
    .refine((value) => Number.isFinite(value) && value >= 0, {
      error: (issue) => `expected a number of milliseconds, got ${describeValue(issue.input)}`,
    })
    .optional()
    .describe(
      'While the task runs and has no new output (with a filter: no new matching line), wait up to this long for some (or for its end) before answering; capped by the tools. Default 0: answer at once.',
    ),
  filter: requiredString('a regular expression', (value) => {
    const bytes = utf8Bytes(value);
    if (bytes > MAX_FILTER_BYTES) return `${bytes} bytes, over the ${MAX_FILTER_BYTES}-byte limit`;
    return regexProblem(value);
  })
    .optional()
    .describe(
      'A JavaScript regular expression: show only the new whole lines that match it (a line still being written waits for a later read). The other lines are still consumed; the answer says how many were left out.',
    ),
  scrollback: optionalBoolean(
    'A task run with tty: instead of its screen, show the lines that scrolled off it since the last read.',
  ),
  max_output_tokens: maxOutputTokens(
    `With it, ${OUTPUT_BUDGET_TEXT} The read consumes all of the new output all the same. Default: all of it is shown.`,
  ),
});
export type BashOutputArguments = z.infer<typeof bashOutputArguments>;

/** Why `source` is not a regular expression (the engine's own message), or undefined when it is one. */
function regexProblem(source: string): string | undefined {
  try {
    new RegExp(source);
    return undefined;
  } catch (err) {
    // The message quotes the expression: keep a line break in it from breaking the one-line error.
    return String(err instanceof Error ? err.message : err).replace(
      /[\r\n\u0085\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
}

export const bashInputArguments = taskArguments
  .extend({
    text: z
      .string({ error: (issue) => `expected a string, got ${describeValue(issue.input)}` })
      .superRefine((value, context) => {
        const bytes = utf8Bytes(value);
        if (bytes > MAX_INPUT_BYTES)
          context.addIssue({
            code: 'custom',
            message: `${bytes} bytes, over the ${MAX_INPUT_BYTES}-byte limit`,
            input: value,
          });
      })
      .optional()
      .describe(
        "What to write to the task's stdin, exactly as given: end a line with \\n (most programs act on whole lines). On a terminal, typed as a person types it.",
      ),
    keys: z
      .array(
        z
          .string({ error: (issue) => `expected key names, got ${describeValue(issue.input)}` })
          .superRefine((value, context) => {
            const problem = keyProblem(value);
            if (problem !== undefined) context.addIssue({ code: 'custom', message: problem, input: value });
          }),
        { error: (issue) => `expected a list of key names, got ${describeValue(issue.input)}` },
      )
      .max(MAX_KEYS, { error: `more than ${MAX_KEYS} keys` })
      .optional()
      .describe(
        "Keys to press after the text, in tmux's spelling: Enter, Tab, Escape, BSpace, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, C-c, C-d, C-z, M-x, or one character.",
      ),
    cols: terminalCells('cols').describe(
      'With rows: resize the terminal of a task run with tty to this many columns.',
    ),
    rows: terminalCells('rows').describe(
      'With cols: resize the terminal of a task run with tty to this many rows.',
    ),
    close: optionalBoolean(
      'Close the stdin after the text (the command then reads end of file). Default: keep it open.',
    ),
  })
  .superRefine((call, context) => {
    if ((call.cols === undefined) !== (call.rows === undefined))
      context.addIssue({
        code: 'custom',
        path: [call.cols === undefined ? 'cols' : 'rows'],
        message: 'a resize needs both cols and rows',
        input: call.cols ?? call.rows,
      });
    // Nothing to do: the text's own message, as for a call before keys and resizes.
    const nothing =
      (call.text ?? '') === '' &&
      (call.keys ?? []).length === 0 &&
      call.cols === undefined &&
      call.close !== true;
    if (nothing)
      context.addIssue({
        code: 'custom',
        path: ['text'],
        message:
          call.text === undefined
            ? 'expected a string, got nothing'
            : 'expected text to write (or close: true to only close the stdin), got ""',
        input: call.text,
      });
  });
export type BashInputArguments = z.infer<typeof bashInputArguments>;

export const bashListArguments = z.strictObject({
  all: optionalBoolean('Also list the tasks that have ended. Default: only running tasks.'),
});
export type BashListArguments = z.infer<typeof bashListArguments>;

export const bashRemindArguments = z
  .strictObject({
    after_ms: z
      .number({ error: (issue) => afterMsProblem(issue.input) })
      .refine((value) => Number.isInteger(value) && value >= 1 && value <= MAX_REMINDER_AFTER_MS, {
        error: (issue) => afterMsProblem(issue.input),
      })
      .optional()
      .describe(
        `How long from now the reminder fires, in milliseconds (at most ${MAX_REMINDER_AFTER_MS}, 30 days).`,
      ),
    note: nonBlankString('a non-blank string', MAX_REMINDER_NOTE_BYTES)
      .optional()
      .describe('What the reminder tells you when it fires: what to look at, and why.'),
    task_ids: z
      .array(taskIdString, {
        error: (issue) => `expected a list of task ids, got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'expected at least one task id' })
      .max(MAX_REMINDER_TASKS, { error: `expected at most ${MAX_REMINDER_TASKS} task ids` })
      .refine((ids) => new Set(ids).size === ids.length, { error: 'a task id is listed twice' })
      .optional()
      .describe(
        'Background tasks of yours (ids bash returned): the reminder fires sooner, once every one of them has ended, and says how each ended.',
      ),
    cancel: requiredString('a reminder id', (value) =>
      isReminderIdShape(value)
        ? undefined
        : `expected an id that bash_remind returned (remind-<uuid>), got ${describeValue(value)}`,
    )
      .optional()
      .describe('Instead of setting one: cancel the pending reminder with this id.'),
  })
  .superRefine((call, context) => {
    const problem = (path: string, message: string, input: unknown) =>
      context.addIssue({ code: 'custom', path: [path], message, input });
    if (call.cancel !== undefined) {
      if (call.after_ms !== undefined || call.note !== undefined || call.task_ids !== undefined)
        problem('cancel', 'a cancel takes no after_ms, note or task_ids', call.cancel);
      return;
    }
    if (call.after_ms === undefined) problem('after_ms', afterMsProblem(undefined), undefined);
    if (call.note === undefined) problem('note', 'expected a non-blank string, got nothing', undefined);
  });
export type BashRemindArguments = z.infer<typeof bashRemindArguments>;

export const bashMonitorArguments = z.strictObject({
  task_id: taskIdString.describe('The id that bash returned for a background task of yours that is running.'),
  notify_on: monitorPattern
    .nullable()
    .describe(`The pattern: ${MONITOR_TEXT} It replaces the task's pattern; null clears it.`),
});
export type BashMonitorArguments = z.infer<typeof bashMonitorArguments>;

const afterMsProblem = (value: unknown) =>
  `expected a whole number of milliseconds from 1 to ${MAX_REMINDER_AFTER_MS}, got ${describeValue(value)}`;
