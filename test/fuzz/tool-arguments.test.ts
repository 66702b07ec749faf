/**
 * Every tool's arguments, fuzzed: `execute` never throws, and answers either with a run or with
 * exactly one line of error text. Invalid shapes are fuzzed heavily against tools whose task queue
 * no worker serves, so a call that wrongly got through would leave a workflow to count; valid calls
 * (a few, with harmless commands) run end to end on a dev server and a worker.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fc, it } from '@fast-check/vitest';
import { beforeAll, describe, expect } from 'vitest';
import type { ToolExecContext, ToolResult } from '../../src/shared/tool-types.js';
import { bashArguments, taskArguments } from '../../src/tools/arguments.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';
import { fieldValue, hostileString, jsonish, runs } from './arbitraries.js';

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-fuzz-')));
const defaultWorkdir = path.join(root, 'default');
const sessionCwd = path.join(root, 'session');
mkdirSync(path.join(sessionCwd, 'sub'), { recursive: true });
mkdirSync(defaultWorkdir);
const aFile = path.join(root, 'a-file');
writeFileSync(aFile, 'not a directory\n');
const aDanglingLink = path.join(root, 'dangling');
symlinkSync(path.join(root, 'nothing-here'), aDanglingLink);

const MAX_TIMEOUT_MS = 5_000;
const suite = useDevServerWithWorker({
  executor: { spillDir: path.join(root, 'spill'), defaultWorkdir, maxTimeoutMs: MAX_TIMEOUT_MS },
});

/** Tools on the worker's queue, for calls that should run. */
let live: Tools;
/** Tools on a queue no worker serves: a call that got past validation would leave a workflow there. */
let unserved: Tools;
const unservedQueue = `fuzz-unserved-${process.pid}-${Date.now()}`;

beforeAll(() => {
  live = toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }));
  unserved = toolsByName(createBashTools({ client: suite.env.client, taskQueue: unservedQueue }));
});

/** One part of an argument error: a field's problem or the unknown arguments. */
const ERROR_PART = `(?:invalid (?:command|description|timeoutMs|workdir|run_in_background|task_id): .+|unknown arguments?: .+)`;
const ARGUMENT_ERROR = new RegExp(
  `^(?:invalid arguments: expected an object, got .+|${ERROR_PART}(?:; ${ERROR_PART})*)$`,
);

/** An error result of exactly one line: one text block, no line break in it. */
function expectOneErrorLine(result: ToolResult): string {
  expect(result.isError).toBe(true);
  expect(result.content).toHaveLength(1);
  const line = text(result);
  expect(line).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
  return line;
}

/** A `bash` call shaped like the real thing, with hostile values in (and around) its fields. */
const bashLike = fc.record(
  {
    command: fieldValue,
    description: fieldValue,
    timeoutMs: fc.oneof(fc.double(), fieldValue),
    workdir: fieldValue,
    run_in_background: fc.oneof(fc.boolean(), fieldValue),
  },
  { requiredKeys: [] },
);
const withExtraKeys = fc
  .tuple(bashLike, fc.dictionary(hostileString, jsonish, { maxKeys: 3 }))
  .map(([args, extra]) => ({ ...extra, ...args }));

const taskLike = fc.oneof(
  fc.record({ task_id: fieldValue }, { requiredKeys: [] }),
  fc.record({ task_id: hostileString.map((id) => `bash-${id}`) }),
  fc.uuid().map((uuid) => ({ task_id: `bash-${uuid}` })),
  fc.tuple(fc.uuid(), hostileString).map(([uuid, extra]) => ({ task_id: `bash-${uuid}`, [extra]: extra })),
);

describe('tool arguments (fuzzed)', () => {
  it.prop([fc.oneof(jsonish, bashLike, withExtraKeys)], runs(400))(
    'bash answers an invalid call with one line naming what is wrong, and starts nothing',
    async (args) => {
      fc.pre(!bashArguments.safeParse(args).success);
      const line = expectOneErrorLine(await unserved.bash.execute(args));
      expect(line).toMatch(ARGUMENT_ERROR);
    },
  );

  it.prop([fc.constantFrom('bash_output', 'bash_kill'), fc.oneof(jsonish, taskLike)], runs(300))(
    'bash_output and bash_kill answer a bad or unknown id with one line, and never throw',
    async (name, args) => {
      const line = expectOneErrorLine(await unserved[name as 'bash_output' | 'bash_kill'].execute(args));
      const parsed = taskArguments.safeParse(args);
      if (parsed.success) expect(line).toBe(`unknown bash task ${parsed.data.task_id}`);
      else expect(line).toMatch(ARGUMENT_ERROR);
    },
  );

  it('left no workflow on the unserved queue', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // visibility may lag a start
    const { count } = await suite.env.client.workflow.count(`TaskQueue = '${unservedQueue}'`);
    expect(count).toBe(0);
  });
});

/** Text a model may print; never a NUL (no exec argument holds one). */
const printable = hostileString.filter((s) => !s.includes('\0'));
const validDescription = printable.filter((s) => s.trim() !== '' && Buffer.byteLength(s) <= 4096);
const singleQuoted = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Workdirs worth trying, with the one-line failure each gets (undefined: the run goes ahead). */
const workdirs: [string | undefined, string | undefined][] = [
  [undefined, undefined],
  ['/', undefined],
  ['sub', undefined],
  [path.join(root, 'missing'), `workdir does not exist or is not a directory: ${path.join(root, 'missing')}`],
  [aFile, `workdir is not a directory: ${aFile}`],
  [
    aDanglingLink,
    `workdir is a dangling symbolic link: ${aDanglingLink} -> ${path.join(root, 'nothing-here')}`,
  ],
  [
    `${root}/line\nbreak`,
    `workdir does not exist or is not a directory: ${JSON.stringify(`${root}/line\nbreak`)}`,
  ],
];

const validCall = fc.record({
  output: printable,
  description: validDescription,
  timeoutMs: fc.oneof(
    fc.constant(undefined),
    fc.integer({ min: 2_000, max: 2 ** 31 }),
    fc.constant(Number.MAX_VALUE),
    fc.constantFrom(Number.MIN_VALUE, 1e-300, 0.5, 1),
  ),
  workdir: fc.constantFrom(...workdirs),
  background: fc.boolean(),
  sessionId: fc.option(hostileString, { nil: undefined }),
});

describe('valid calls (fuzzed, end to end)', () => {
  it.prop([validCall], runs(12))(
    'run, and show exactly what the command printed, or fail in one line that names the workdir',
    async ({ output, description, timeoutMs, workdir: [workdir, failure], background, sessionId }) => {
      const args = {
        command: `printf %s ${singleQuoted(output)}`,
        description,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(workdir !== undefined ? { workdir } : {}),
        ...(background ? { run_in_background: true } : {}),
      };
      expect(bashArguments.safeParse(args).success).toBe(true);
      const exec: ToolExecContext = sessionId !== undefined ? { agent: { sessionId, cwd: sessionCwd } } : {};
      const result = await live.bash.execute(args, exec);
      if (background) {
        expect(text(result)).toMatch(/^started background task bash-[0-9a-f-]{36}$/);
        return;
      }
      if (failure !== undefined || (workdir === 'sub' && exec.agent === undefined)) {
        const expected =
          failure ?? `workdir does not exist or is not a directory: ${path.join(defaultWorkdir, 'sub')}`;
        expect(expectOneErrorLine(result)).toBe(expected);
        return;
      }
      // What bash printed: the output as UTF-8 (a lone surrogate travels as U+FFFD).
      const printed = Buffer.from(output).toString('utf8');
      const shown = printed === '' ? '(no output)' : printed;
      expect(result.isError).toBeUndefined();
      if (timeoutMs === undefined || timeoutMs >= 2_000) {
        expect(text(result)).toBe(shown);
        return;
      }
      // A timeout of a millisecond or less may fire before printf runs, while it runs, or after it ends.
      const timedOut = `[timed out after ${Math.min(timeoutMs, MAX_TIMEOUT_MS)}ms]`;
      const outcomes = [shown, '(no output)'].flatMap((before) => [
        `${before}\n${timedOut}`,
        `${before}\n${timedOut}\n[killed by signal: SIGTERM]`,
      ]);
      expect([shown, ...outcomes]).toContain(text(result));
    },
  );
});
