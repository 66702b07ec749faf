/**
 * The ownership fence under hostile session ids. Pure properties of owner tokens and the visibility
 * queries built from them; then a model-based test (fc.commands) in which three or four sessions
 * with adversarial ids (and sometimes a caller with no agent) start, read, kill and list background
 * tasks on a dev server and a worker. The model: a session sees and touches exactly its own tasks
 * (and unowned ones), and gets `task <id> belongs to another session` for any other.
 */
import { randomUUID } from 'node:crypto';
import { fc, it } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { mayAccess, ownerToken, sessionOfOwner } from '../../src/client/ownership.js';
import { quoteQueryValue, taskListQuery } from '../../src/client/task-list.js';
import type { ToolExecContext } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { printedBytes } from '../helpers/printed.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';
import { hostileString, loneSurrogate, runs } from './arbitraries.js';

/** Session ids that have broken fences elsewhere: quoting, escaping, encodings, look-alikes. */
const adversarialIds = [
  '',
  ' ',
  'a b',
  'a%20b',
  'a%2520b',
  'session:a b',
  "a' OR BashTaskOwner != '",
  "x\\' OR 1=1 --",
  '\\',
  '"',
  '%',
  '%25',
  'a\uD800',
  'a%uD800',
  'a\uFFFD',
  'ü€😀',
];

const sessionId = fc.oneof(fc.constantFrom(...adversarialIds), hostileString);

/** A session id and another one made from it to collide: its token's text, a near twin, or anything. */
const twinIds = sessionId.chain((id) =>
  fc.tuple(
    fc.constant(id),
    fc.oneof(
      sessionId,
      fc.constant(ownerToken(id).slice('session:'.length)),
      fc.constant(ownerToken(id)),
      fc.constant(encodeURIComponent(id.replace(/[\uD800-\uDFFF]/g, 'x'))),
      loneSurrogate.map((s) => id + s),
      fc.constant(`${id}\uFFFD`),
      fc.constant(id.normalize('NFD')),
    ),
  ),
);

/** Reads a visibility-query string literal back, or undefined when `text` is not exactly one. */
function unquote(text: string): string | undefined {
  const match = /^'((?:[^'\\]|\\.)*)'$/s.exec(text);
  return match?.[1]?.replace(/\\(.)/gs, '$1');
}

describe('owner tokens (fuzzed)', () => {
  it.prop([twinIds], runs(2000))(
    'give distinct sessions distinct tokens, and let only the owner in',
    ([a, b]) => {
      expect(ownerToken(a) === ownerToken(b)).toBe(a === b);
      expect(mayAccess(ownerToken(a), b)).toBe(a === b);
      expect(mayAccess(ownerToken(a), undefined)).toBe(false);
    },
  );

  it.prop([sessionId], runs(1000))(
    'hold no quote, backslash, space or control character, and read back',
    (id) => {
      expect(ownerToken(id)).toMatch(/^session:[A-Za-z0-9\-_.~%]*$/);
      if (!/[\uD800-\uDFFF]/.test(id.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) {
        expect(sessionOfOwner(ownerToken(id))).toBe(id);
      }
    },
  );

  it.prop([sessionId], runs(1000))(
    'build a listing query that only ever compares the owner with its token',
    (id) => {
      const query = taskListQuery({ owner: id });
      const prefix = `WorkflowType = 'bashTask' AND BashTaskOwner = `;
      expect(query.startsWith(prefix)).toBe(true);
      expect(unquote(query.slice(prefix.length))).toBe(ownerToken(id));
    },
  );

  it.prop([hostileString], runs(1000))(
    'quote any value as one literal that reads back as the value',
    (value) => {
      expect(unquote(quoteQueryValue(value))).toBe(value);
    },
  );
});

// --- The model-based test, on a dev server and a worker -------------------------------------------

const suite = useDevServerWithWorker();
let tools: Tools;
let tasks: BashTasks;

beforeAll(() => {
  const all = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
  tools = toolsByName(all);
  tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
});

/** A caller: an agent session's id, or null for a caller with no agent. */
type Caller = string | null;

interface ModelTask {
  id: string;
  /** The session that started it; null when no agent did (anyone may touch it). */
  owner: Caller;
  /** The line the task prints once at its start. */
  marker: string;
  /** Some read returned the marker (reads never return the same bytes twice). */
  seen: boolean;
  killed: boolean;
}

/** Every task started in this file, across runs: sessions recur, so a listing covers them all. */
const world: ModelTask[] = [];

interface Model {
  callers: Caller[];
  /** The tasks started in this run, killed at its end. Reads and kills pick from the whole world. */
  started: ModelTask[];
}

interface Real {
  tools: typeof tools;
  tasks: BashTasks;
}

const as = (caller: Caller): ToolExecContext => (caller === null ? {} : { agent: { sessionId: caller } });
const show = (caller: Caller) => (caller === null ? 'no agent' : JSON.stringify(caller));
const mayTouch = (task: ModelTask, caller: Caller) => task.owner === null || task.owner === caller;
const foreign = (id: string) => ({
  content: [{ type: 'text', text: `task ${id} belongs to another session` }],
  isError: true,
});
const statusOf = (task: ModelTask) => (task.killed ? '[status: killed by SIGTERM]' : '[status: running]');

class Start implements fc.AsyncCommand<Model, Real> {
  constructor(readonly caller: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const caller = model.callers[this.caller % model.callers.length] ?? null;
    const marker = `out-${randomUUID()}`;
    const result = await real.tools.bash.execute(
      {
        command: `echo ${marker}; sleep 60`,
        description: 'Print a marker and wait',
        run_in_background: true,
      },
      as(caller),
    );
    const task = { id: startedTaskId(text(result)), owner: caller, marker, seen: false, killed: false };
    world.push(task);
    model.started.push(task);
    // Until the marker is on the server, a read or a kill would race the echo. A snapshot moves no
    // read position.
    await expect
      .poll(async () => await printedBytes(real.tasks, task.id, caller ?? undefined), {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
  }
  toString = () => `start(#${this.caller})`;
}

class Read implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly caller: number,
    readonly pick: number,
  ) {}
  check = () => world.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const caller = model.callers[this.caller % model.callers.length] ?? null;
    const task = world[this.pick % world.length] as ModelTask;
    const result = await real.tools.bash_output.execute({ task_id: task.id }, as(caller));
    if (!mayTouch(task, caller)) {
      expect(result, `${show(caller)} read ${task.id} of ${show(task.owner)}`).toEqual(foreign(task.id));
      return;
    }
    const got = text(result);
    const fresh = `${task.marker}\n${statusOf(task)}`;
    const nothing = `(no new output)\n${statusOf(task)}`;
    expect(got, `${show(caller)} read ${task.id}`).toBe(task.seen ? nothing : fresh);
    task.seen = true;
  }
  toString = () => `read(#${this.caller}, task ${this.pick})`;
}

class Kill implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly caller: number,
    readonly pick: number,
  ) {}
  check = () => world.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const caller = model.callers[this.caller % model.callers.length] ?? null;
    const task = world[this.pick % world.length] as ModelTask;
    const result = await real.tools.bash_kill.execute({ task_id: task.id }, as(caller));
    if (!mayTouch(task, caller)) {
      expect(result, `${show(caller)} killed ${task.id} of ${show(task.owner)}`).toEqual(foreign(task.id));
      return;
    }
    const expected = task.killed
      ? `task ${task.id} had already finished`
      : `killed background task ${task.id}`;
    expect(result).toEqual({ content: [{ type: 'text', text: expected }] });
    task.killed = true;
  }
  toString = () => `kill(#${this.caller}, task ${this.pick})`;
}

class List implements fc.AsyncCommand<Model, Real> {
  constructor(readonly caller: number) {}
  check = (model: Readonly<Model>) => model.callers[this.caller % model.callers.length] !== null;
  async run(model: Model, real: Real): Promise<void> {
    const caller = model.callers[this.caller % model.callers.length] as string;
    const own = world.filter((task) => task.owner === caller).map((task) => task.id);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const listed = (await real.tasks.list({ owner: caller }, 1_000)).map((task) => task.taskId);
      // Never another session's task, not even for a moment while visibility catches up.
      expect(own, `${show(caller)} listed a task not its own`).toEqual(expect.arrayContaining(listed));
      if (listed.length === own.length || Date.now() > deadline) {
        expect(listed.sort()).toEqual([...own].sort());
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  toString = () => `list(#${this.caller})`;
}

const callerArb = fc.oneof({ weight: 5, arbitrary: sessionId }, { weight: 1, arbitrary: fc.constant(null) });
/** Three or four callers; often one is the twin whose id spells another's token (`%22` for `"`). */
const callers = fc
  .tuple(fc.uniqueArray(callerArb, { minLength: 3, maxLength: 3 }), fc.boolean())
  .map(([ids, twin]) => {
    const first = ids[0];
    if (!twin || typeof first !== 'string') return ids;
    const spelled = ownerToken(first).slice('session:'.length);
    return ids.includes(spelled) ? ids : [...ids, spelled];
  });
const index = fc.nat({ max: 63 });
const commands = fc.commands(
  [
    index.map((caller) => new Start(caller)),
    fc.tuple(index, index).map(([caller, pick]) => new Read(caller, pick)),
    fc.tuple(index, index).map(([caller, pick]) => new Kill(caller, pick)),
    index.map((caller) => new List(caller)),
  ],
  { maxCommands: 20 },
);

/** Ends what a run left running (as each task's owner), after checking no read was stolen. */
async function endRun(model: Model): Promise<void> {
  await Promise.all(
    model.started.map(async (task) => {
      const exec = as(task.owner);
      if (!task.killed) await tools.bash_kill.execute({ task_id: task.id }, exec);
      task.killed = true;
      // A read by anyone who may not touch the task would have taken its marker: the owner gets it.
      if (!task.seen) {
        expect(text(await tools.bash_output.execute({ task_id: task.id }, exec))).toBe(
          `${task.marker}\n[status: killed by SIGTERM]`,
        );
      }
      task.seen = true;
    }),
  );
}

afterAll(async () => {
  await Promise.all(
    world
      .filter((task) => !task.killed)
      .map((task) => tools.bash_kill.execute({ task_id: task.id }, as(task.owner))),
  );
});

describe('the ownership fence (model-based, against a dev server)', () => {
  it.prop([callers, commands], { ...runs(8), endOnFailure: true })(
    'lets each session see and touch exactly its own tasks, whatever its id',
    async (ids, cmds) => {
      const model: Model = { callers: ids, started: [] };
      try {
        await fc.asyncModelRun(() => ({ model, real: { tools, tasks } }), cmds);
      } finally {
        await endRun(model);
      }
    },
    120_000,
  );
});
