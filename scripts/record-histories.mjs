#!/usr/bin/env node
/**
 * Records this build's workflow histories as a release's replay fixtures: one scenario per kind of
 * run, driven through the real tools (`bash`, `bash_output`, `bash_kill`, `bash_input`, `bash_list`)
 * against a dev server and workers of its own, in this process. Every workflow run in the namespace
 * is then written as `<scenario>--<workflowType>[-<n>].json` (a `fetchHistory()` result, as
 * test/workflows/replay.test.ts reads it; `-<n>` numbers the runs of one type by start, when a
 * scenario has more than one). docs/RELEASING.md says when to record.
 *
 *   npm run build && node scripts/record-histories.mjs [test/fixtures/histories/<version>]
 *   npm run record:histories [-- test/fixtures/histories/<version>]
 *
 * The folder defaults to package.json's version. Its `*.json` files are replaced only once every
 * scenario has recorded; a folder whose release is tagged (`v<version>`) is refused, as a cut
 * release's fixtures never change. The dev server and workers run over the built `dist/` and its
 * workflow bundle; commands get only a few variables of this environment (no secret can reach their
 * output), and the histories are checked for the values of secret-looking variables before they
 * are written. Takes about 40 s (and the build before it).
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { isSameProcess, readRecord } from '../dist/command-host/supervisor/supervisor-records.js';
import { createAgentWorker, createBashTools, createBashWorker } from '../dist/index.js';
import { createDevServerEnv } from '../dist/testing/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const NAMESPACE = 'default';
/** A reader ends this long after its task ended and nothing read it (30 minutes by default). */
const READER_IDLE_MS = 1_000;
/** The only variables of this process that commands get. */
const COMMAND_ENV = ['PATH', 'LANG', 'LC_*'];
/** How long one scenario's workflows may take to close once it is done. */
const SETTLE_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------------------------------------
// Where to record

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h') || args.length > 1) {
  console.log('usage: node scripts/record-histories.mjs [test/fixtures/histories/<version>]');
  process.exit(args.length > 1 ? 2 : 0);
}
const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
const outDir = path.resolve(args[0] ?? path.join(root, 'test', 'fixtures', 'histories', version));
refuseCutRelease(path.basename(outDir));
if (!existsSync(path.join(root, 'dist', 'workflows', 'bundle.js'))) {
  console.error('record-histories: no dist/workflows/bundle.js; run npm run build first');
  process.exit(1);
}
/** Formats the fixtures as `npx biome check .` wants them (JSON.stringify spreads short arrays). */
const biome = path.join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
if (!existsSync(biome)) {
  console.error('record-histories: no Biome in node_modules; run npm ci first');
  process.exit(1);
}

/** A release whose tag exists has been cut: its fixtures stay as they were recorded. */
function refuseCutRelease(release) {
  for (const tag of [`v${release}`, release]) {
    try {
      execFileSync('git', ['rev-parse', '--quiet', '--verify', `refs/tags/${tag}`], {
        cwd: root,
        stdio: 'ignore',
      });
    } catch {
      continue; // No such tag (or no git): not cut.
    }
    console.error(`record-histories: release ${release} is cut (tag ${tag}); its fixtures never change`);
    process.exit(1);
  }
}

// ---------------------------------------------------------------------------------------------
// The server, the client, and each scenario's workers and tools

// Failed and killed runs are what the scenarios are for: only the SDK's errors are worth printing.
Runtime.install({ logger: new DefaultLogger('ERROR') });
// Always a server of its own: histories of someone else's server would hold their runs too.
delete process.env.DURABLE_BASH_TEST_ADDRESS;

const startedAt = Date.now();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-record-'));
const log = (line) => console.log(line);
const text = (result) => result.content.map((block) => block.text).join('');
const indent = (value) => value.replaceAll('\n', '\n     ');

/** One scenario: its own task queue, host, spill directory, workdir, session and agent host. */
class Scenario {
  constructor(name, { tools = {}, agentWorker = true } = {}) {
    this.name = name;
    this.taskQueue = `record-${name}`;
    this.hostId = `record-${name}-host`;
    this.sessionId = `record-${name}-session`;
    this.agentTaskQueue = `record-${name}-agent`;
    this.spillDir = path.join(scratch, 'spill', name);
    this.workdir = path.join(scratch, 'work', name);
    this.toolOptions = tools;
    this.wantsAgentWorker = agentWorker;
    /** Every notice this scenario's agent host was given. */
    this.notices = [];
    this.workerCount = 0;
    this.commandWorker = undefined;
    this.agentWorker = undefined;
  }

  async start() {
    mkdirSync(this.workdir, { recursive: true });
    await this.startWorker();
    if (this.wantsAgentWorker) {
      const worker = await createAgentWorker({
        connection: env.nativeConnection,
        namespace: NAMESPACE,
        taskQueue: this.agentTaskQueue,
        identity: `record-histories:${this.name}:agent`,
        agents: {
          inject: async (sessionId, content, options) => {
            this.notices.push({ sessionId, content, noticeId: options.noticeId });
            log(`  [${this.name}] notice for ${sessionId}: ${indent(content)}`);
            return sessionId === this.sessionId;
          },
        },
      });
      this.agentWorker = { worker, running: watched(worker.run()) };
    }
    this.tools = Object.fromEntries(
      createBashTools({
        client,
        taskQueue: this.taskQueue,
        agentTaskQueue: this.agentTaskQueue,
        ...this.toolOptions,
        reader: { idleMs: READER_IDLE_MS, ...this.toolOptions.reader },
      }).map((tool) => [tool.name, tool]),
    );
  }

  /** A command worker of this scenario's host: the same identity and spill directory each time. */
  async startWorker() {
    this.workerCount += 1;
    const worker = await createBashWorker({
      connection: env.nativeConnection,
      namespace: NAMESPACE,
      taskQueue: this.taskQueue,
      identity: `record-histories:${this.name}:worker-${this.workerCount}`,
      executor: {
        hostId: this.hostId,
        spillDir: this.spillDir,
        defaultWorkdir: this.workdir,
        envAllowlist: COMMAND_ENV,
        // Containment records nothing in a history; with none, no session network outlives the script.
        isolation: 'none',
      },
    });
    this.commandWorker = { worker, running: watched(worker.run()) };
    if (this.workerCount > 1) log(`  [${this.name}] (a new command worker on host ${this.hostId})`);
  }

  /** Shuts the command worker down: its commands keep running under their supervisors. */
  async stopWorker() {
    const { worker, running } = this.commandWorker;
    this.commandWorker = undefined;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    log(`  [${this.name}] (the command worker is shut down)`);
  }

  /** Calls a tool as the scenario's session; prints the call and its answer. */
  async call(name, callArgs, { quiet = false } = {}) {
    const result = await this.tools[name].execute(callArgs, {
      agent: { sessionId: this.sessionId, cwd: this.workdir },
    });
    const answer = text(result);
    if (!quiet || result.isError) this.print(name, callArgs, answer);
    if (result.isError) throw new Error(`${this.name}: ${name} failed: ${answer}`);
    return answer;
  }

  print(name, callArgs, answer) {
    log(`  [${this.name}] -> ${name} ${JSON.stringify(callArgs)}`);
    log(`  [${this.name}] <- ${indent(answer)}`);
  }

  /** Starts a background task with `bash`; its id. */
  async background(callArgs) {
    const started = await this.call('bash', { run_in_background: true, ...callArgs });
    return taskIdIn(started);
  }

  /** Reads with `bash_output` (each read waiting up to 2 s) until an answer matches `until`. */
  async readUntil(taskId, until, extra = {}) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await this.call('bash_output', { task_id: taskId, wait_ms: 2_000, ...extra });
      if (until.test(answer)) return answer;
      if (Date.now() > deadline) throw new Error(`${this.name}: ${taskId} never showed ${until}`);
    }
  }

  /** Makes a file in the workdir (what a command waits for: the world outside it moving on). */
  touch(file) {
    writeFileSync(path.join(this.workdir, file), '');
  }

  /** Waits until every workflow run on this scenario's queue has closed. */
  async settle() {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    let seen = -1;
    for (;;) {
      const runs = await listRuns(`TaskQueue = '${this.taskQueue}'`);
      const open = runs.filter((run) => run.status.name === 'RUNNING');
      // Closed, and the same runs twice in a row (a start may reach visibility a moment late).
      if (open.length === 0 && runs.length === seen) return runs;
      seen = open.length === 0 ? runs.length : -1;
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name}: still open after ${SETTLE_TIMEOUT_MS}ms: ${open.map((run) => `${run.type} ${run.workflowId}`).join(', ')}`,
        );
      }
      const results = open.map((run) =>
        client.workflow
          .getHandle(run.workflowId, run.runId)
          .result()
          .catch(() => undefined),
      );
      await Promise.race([Promise.all(results), sleep(2_000)]);
      await sleep(250);
    }
  }

  /** Stops its workers, then ends any command a failed scenario left running. */
  async close() {
    const stopping = [];
    if (this.commandWorker) {
      const { worker, running } = this.commandWorker;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      stopping.push(running.catch((err) => log(`  [${this.name}] command worker: ${err}`)));
    }
    if (this.agentWorker) {
      const { worker, running } = this.agentWorker;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      stopping.push(running.catch((err) => log(`  [${this.name}] agent worker: ${err}`)));
    }
    this.commandWorker = undefined;
    this.agentWorker = undefined;
    await Promise.all(stopping);
    await endLeftCommands(this.spillDir);
  }
}

/** A worker's run: awaited when it stops; a failure before then is printed, not an unhandled rejection. */
function watched(run) {
  run.catch((err) => log(`  (a worker failed: ${err})`));
  return run;
}

function taskIdIn(answer) {
  const id = /(bash-[0-9a-f-]{36})/.exec(answer)?.[1];
  if (!id) throw new Error(`no task id in ${JSON.stringify(answer)}`);
  return id;
}

function expectText(scenario, answer, pattern) {
  if (!pattern.test(answer))
    throw new Error(`${scenario.name}: expected ${pattern}, got ${JSON.stringify(answer)}`);
}

/** Every run the query matches (closed ones included). */
async function listRuns(query) {
  const runs = [];
  for await (const run of client.workflow.list(query ? { query } : {})) runs.push(run);
  return runs;
}

/** The outcome of a task's completion notice, once it has one. */
async function noticeOutcome(taskId) {
  await client.workflow
    .getHandle(taskId)
    .result()
    .catch(() => undefined);
  return client.workflow.getHandle(`${taskId}-notice`).result();
}

/** The task's run has closed with no completion notice started: the session's own kill answered for it. */
async function expectNoNotice(scenario, taskId) {
  await client.workflow
    .getHandle(taskId)
    .result()
    .catch(() => undefined);
  const notice = await client.workflow
    .getHandle(`${taskId}-notice`)
    .describe()
    .catch(() => undefined);
  if (notice !== undefined) throw new Error(`${scenario.name}: ${taskId} got a completion notice`);
}

/** SIGKILLs (through its supervisor) every command still running from a spill directory. */
async function endLeftCommands(spillDir) {
  if (!existsSync(spillDir)) return;
  for (const name of readdirSync(spillDir).filter((file) => file.endsWith('.state'))) {
    const record = await readRecord(path.join(spillDir, name));
    if (record === undefined || record.tombstone || !isSameProcess(record, 'supervisor')) continue;
    log(`  (ending a command left running: supervisor ${record.supervisorPid})`);
    process.kill(record.supervisorPid, 'SIGUSR1'); // It SIGKILLs the command's group, then records the end.
  }
}

// ---------------------------------------------------------------------------------------------
// The scenarios: one per kind of run. Each waits for every workflow it started to close, and has at
// least `runs` of each type.

const scenarios = [
  {
    name: 'foreground-exit-nonzero',
    runs: { bashTask: 1 },
    why: 'a foreground run that exits 3, with output on both streams',
    async run(s) {
      const answer = await s.call('bash', {
        command: 'echo "to stdout"; echo "to stderr" >&2; exit 3',
        description: 'Print to both streams and fail',
      });
      expectText(s, answer, /exit code: 3/);
    },
  },
  {
    name: 'foreground-timeout',
    runs: { bashTask: 1 },
    why: 'a foreground run whose timeout fires; it traps SIGTERM and exits 0',
    async run(s) {
      const answer = await s.call('bash', {
        command: "trap 'echo caught SIGTERM; exit 0' TERM; echo waiting; while :; do sleep 0.1; done",
        description: 'Wait for the timeout',
        timeoutMs: 2_000,
      });
      expectText(s, answer, /timed out after 2000ms/);
    },
  },
  {
    name: 'background-read-notice',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a background task read three ways (at once, wait_ms, filter), listed, and its notice delivered',
    async run(s) {
      const taskId = await s.background({
        command:
          'for i in 1 2 3 4; do echo "step $i"; if [ $((i % 2)) -eq 0 ]; then echo "check $i ok"; fi; sleep 0.3; done; ' +
          'while [ ! -e gate ]; do sleep 0.1; done; echo "one warning" >&2; echo finished; exit 1',
        description: 'Run steps in the background',
      });
      await s.call('bash_output', { task_id: taskId });
      await s.call('bash_output', { task_id: taskId, wait_ms: 3_000 });
      await s.readUntil(taskId, /check 4 ok/, { filter: 'ok$' });
      expectText(s, await s.call('bash_list', {}), new RegExp(`${taskId} +running`));
      s.touch('gate');
      if ((await noticeOutcome(taskId)) !== 'delivered') throw new Error(`${s.name}: notice not delivered`);
      if (!s.notices.some((notice) => notice.content.includes('exit code: 1')))
        throw new Error(`${s.name}: the session got no notice of the exit`);
    },
  },
  {
    name: 'background-killed',
    runs: { bashTask: 1, bashOutputReader: 1 },
    why: 'a background task its session killed with bash_kill, whose answer is its notice',
    async run(s) {
      const taskId = await s.background({
        command: 'echo started; sleep 600',
        description: 'Sleep a long time',
      });
      await s.readUntil(taskId, /started/);
      expectText(s, await s.call('bash_kill', { task_id: taskId }), /^killed background task/);
      await expectNoNotice(s, taskId);
    },
  },
  {
    name: 'monitored-killed',
    runs: { bashTask: 1, monitorNotices: 1 },
    why: 'a monitored task its session killed: the notice workflow delivers the match, then closes',
    async run(s) {
      const taskId = await s.background({
        command: 'echo "MATCH 1"; sleep 600',
        description: 'Print a match, then sleep',
        notify_on: '^MATCH',
      });
      const deadline = Date.now() + 30_000;
      while (!s.notices.some((notice) => notice.noticeId === `${taskId}-match-1`)) {
        if (Date.now() > deadline) throw new Error(`${s.name}: the monitor's notice never came`);
        await sleep(100);
      }
      expectText(s, await s.call('bash_kill', { task_id: taskId }), /^killed background task/);
      await client.workflow.getHandle(`${taskId}-notice`).result();
      if (s.notices.some((notice) => notice.noticeId === `${taskId}-notice`))
        throw new Error(`${s.name}: a completion notice came for a task its session killed`);
    },
  },
  {
    name: 'stdin-written-and-closed',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a background task with keep_stdin_open, written to and closed with bash_input',
    async run(s) {
      const taskId = await s.background({
        command: 'while read -r line; do echo "got $line"; done; echo "end of input"',
        description: 'Echo each line of stdin',
        keep_stdin_open: true,
      });
      expectText(s, await s.call('bash_input', { task_id: taskId, text: 'first\n' }), /^wrote 6 bytes/);
      expectText(
        s,
        await s.call('bash_input', { task_id: taskId, text: 'second\n', close: true }),
        /^wrote 7 bytes/,
      );
      await s.readUntil(taskId, /\[status: completed, exit code: 0\]/);
    },
  },
  {
    name: 'auto-background',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a foreground run moved to the background by autoBackgroundAfterMs, then read to its end',
    tools: { autoBackgroundAfterMs: 1_500 },
    async run(s) {
      const answer = await s.call('bash', {
        command: 'echo begun; while [ ! -e gate ]; do sleep 0.1; done; echo finished',
        description: 'Wait for the gate',
      });
      expectText(s, answer, /moved to background task/);
      const taskId = taskIdIn(answer);
      s.touch('gate');
      await s.readUntil(taskId, /\[status: completed, exit code: 0\]/);
      if ((await noticeOutcome(taskId)) !== 'delivered') throw new Error(`${s.name}: notice not delivered`);
    },
  },
  {
    name: 'terminal',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a terminal task typed into with text and keys, resized, then ending',
    async run(s) {
      const taskId = await s.background({
        command:
          'read -r -p \'name? \' name; echo "hello $name"; read -r -p \'press Enter to end \'; echo "size $(stty size)"',
        description: 'Ask for a name on a terminal',
        tty: true,
        cols: 40,
        rows: 8,
      });
      await s.readUntil(taskId, /name\?/);
      await s.call('bash_input', { task_id: taskId, text: 'world', keys: ['Enter'] });
      await s.readUntil(taskId, /press Enter to end/);
      await s.call('bash_input', { task_id: taskId, cols: 60, rows: 12 });
      // A screen is drawn at the new size from the next byte the program writes on.
      await s.call('bash_input', { task_id: taskId, keys: ['Enter'] });
      await s.readUntil(taskId, /size 12 60\n\[screen: 60x12.*\]\n\[status: completed, exit code: 0\]/);
    },
  },
  {
    name: 'worker-restart-reattached',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a background task whose worker is shut down; a new worker of the same host re-attaches and sees it end',
    async run(s) {
      const taskId = await s.background({
        command:
          'echo "before the restart"; while [ ! -e gate-1 ]; do sleep 0.1; done; echo "while no worker was up"; ' +
          'while [ ! -e gate-2 ]; do sleep 0.1; done; echo "after the restart"; exit 7',
        description: 'Count through a worker restart',
      });
      await s.readUntil(taskId, /before the restart/);
      await s.stopWorker();
      s.touch('gate-1');
      await sleep(1_000);
      await s.startWorker();
      await s.readUntil(taskId, /while no worker was up/);
      s.touch('gate-2');
      await s.readUntil(taskId, /\[status: completed, exit code: 7\]/);
    },
  },
  {
    name: 'killed-while-worker-down',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a kill sent while the task’s worker is down; it takes effect when the worker is back',
    async run(s) {
      const taskId = await s.background({
        command: 'echo started; sleep 600',
        description: 'Sleep a long time',
      });
      await s.readUntil(taskId, /started/);
      await s.stopWorker();
      expectText(s, await s.call('bash_kill', { task_id: taskId }), /is pending: no worker on its host/);
      await s.startWorker();
      await s.readUntil(taskId, /\[status: killed by SIGTERM\]/);
    },
  },
  {
    name: 'killed-before-start',
    runs: { bashTask: 1, completionNotice: 1 },
    why: 'a bash_kill pending while no worker runs the new task; it ends killed before the command started',
    async run(s) {
      await s.stopWorker();
      const taskId = await s.background({ command: 'echo never', description: 'Never run' });
      // The kill waits for a worker: its answer takes back that it answers for the end.
      expectText(s, await s.call('bash_kill', { task_id: taskId }), /is pending: no worker on its host/);
      await s.startWorker();
      if ((await noticeOutcome(taskId)) !== 'delivered')
        throw new Error(`${s.name}: the notice was not delivered`);
      await s.readUntil(taskId, /\[status: killed before the command started\]/);
    },
  },
  {
    name: 'reader-continued-as-new',
    runs: { bashTask: 1, bashOutputReader: 3, completionNotice: 1 },
    why: 'an output reader that continues as new every 2 claims',
    tools: { reader: { claimsPerRun: 2 } },
    async run(s) {
      const taskId = await s.background({
        command:
          'for i in 1 2 3 4 5; do echo "tick $i"; sleep 0.3; done; while [ ! -e gate ]; do sleep 0.1; done; echo done',
        description: 'Tick five times',
      });
      for (let read = 0; read < 5; read++) await s.call('bash_output', { task_id: taskId, wait_ms: 1_000 });
      s.touch('gate');
      await s.readUntil(taskId, /\[status: completed, exit code: 0\]/);
    },
  },
  {
    name: 'notice-expired',
    runs: { bashTask: 1, bashOutputReader: 1, completionNotice: 1 },
    why: 'a completion notice whose 2 s window runs out with no agent worker; listed, then read',
    tools: { noticeWindowMs: 2_000 },
    agentWorker: false,
    async run(s) {
      const taskId = await s.background({ command: 'echo finished', description: 'Finish at once' });
      if ((await noticeOutcome(taskId)) !== 'expired')
        throw new Error(`${s.name}: the notice did not expire`);
      // The mark reaches visibility a moment after the notice closed.
      const deadline = Date.now() + 30_000;
      let listing = '';
      const marked = new RegExp(`${taskId} +completed \\(notice not delivered\\)`);
      while (!marked.test(listing)) {
        if (Date.now() > deadline) throw new Error(`${s.name}: the listing never marked the notice`);
        listing = await s.call('bash_list', {}, { quiet: true });
      }
      s.print('bash_list', {}, listing);
      await s.readUntil(taskId, /\[status: completed, exit code: 0\]/);
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Record

let env;
let client;
const started = [];
let failed = false;
try {
  log(
    `record-histories: a dev server of its own, recording into ${path.relative(process.cwd(), outDir) || '.'}`,
  );
  env = await createDevServerEnv();
  client = new Client({
    connection: env.connection,
    namespace: NAMESPACE,
    identity: 'record-histories:tools',
  });
  for (const spec of scenarios) {
    const scenario = new Scenario(spec.name, spec);
    started.push(scenario);
    const began = Date.now();
    log(`\n${spec.name}: ${spec.why}`);
    await scenario.start();
    await spec.run(scenario);
    const runs = await scenario.settle();
    for (const [type, least] of Object.entries(spec.runs)) {
      const count = runs.filter((run) => run.type === type).length;
      if (count < least) throw new Error(`${spec.name}: ${count} ${type} runs, expected at least ${least}`);
    }
    await scenario.close();
    log(
      `  [${spec.name}] closed: ${runs.length} workflow runs (${((Date.now() - began) / 1000).toFixed(1)} s)`,
    );
  }
  const files = await fetchHistories();
  checkNoSecrets(files);
  writeFixtures(files);
} catch (err) {
  failed = true;
  console.error(`\nrecord-histories failed: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
} finally {
  await Promise.all(started.map((scenario) => scenario.close().catch(() => undefined)));
  await env?.teardown().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
}
log(`\nrecord-histories: ${failed ? 'failed' : 'done'} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);

/** Every run in the namespace, named by its scenario (its task queue), type and start. */
async function fetchHistories() {
  const byQueue = new Map(started.map((scenario) => [scenario.taskQueue, scenario.name]));
  const runs = await listRuns('');
  const groups = new Map();
  for (const run of runs) {
    const scenario = byQueue.get(run.taskQueue);
    if (scenario === undefined)
      throw new Error(`a run on no scenario's queue: ${run.type} ${run.workflowId}`);
    if (run.status.name === 'RUNNING') throw new Error(`still running: ${run.type} ${run.workflowId}`);
    const key = `${scenario}--${run.type}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const files = [];
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    group.sort((a, b) => a.startTime.getTime() - b.startTime.getTime() || a.runId.localeCompare(b.runId));
    for (const [index, run] of group.entries()) {
      const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      const name = group.length > 1 ? `${key}-${index + 1}.json` : `${key}.json`;
      files.push({
        name,
        json: `${JSON.stringify(history, null, 2)}\n`,
        events: history.events?.length ?? 0,
      });
    }
  }
  return files;
}

/**
 * No value of a secret-looking variable of this environment may be in a history, in its JSON or in
 * its payloads (base64 in the JSON). Commands never see those variables (COMMAND_ENV); this checks.
 */
function checkNoSecrets(files) {
  const secrets = Object.entries(process.env).filter(
    ([key, value]) =>
      /SECRET|TOKEN|PASSW|CREDENTIAL|API_?KEY|PRIVATE|AUTH|COOKIE|SESSION_KEY/i.test(key) &&
      typeof value === 'string' &&
      value.length >= 8,
  );
  for (const file of files) {
    const decoded = [];
    JSON.parse(file.json, (key, value) => {
      if (key === 'data' && typeof value === 'string')
        decoded.push(Buffer.from(value, 'base64').toString('utf8'));
      return value;
    });
    const haystack = `${file.json}\n${decoded.join('\n')}`;
    for (const [key, value] of secrets) {
      if (haystack.includes(value))
        throw new Error(`${file.name} holds the value of ${key}; nothing was written`);
    }
  }
  log(`\nno history holds the value of any of the ${secrets.length} secret-looking variables here`);
}

/**
 * Replaces the folder's fixtures with these, formatted as the repository's other files (Biome, so
 * `npx biome check .` passes), and prints what was written.
 */
function writeFixtures(files) {
  mkdirSync(outDir, { recursive: true });
  for (const old of readdirSync(outDir).filter((file) => file.endsWith('.json')))
    rmSync(path.join(outDir, old));
  for (const file of files) writeFileSync(path.join(outDir, file.name), file.json);
  execFileSync(process.execPath, [biome, 'format', '--write', outDir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`\n${files.length} histories in ${path.relative(process.cwd(), outDir) || '.'}:`);
  for (const file of files) {
    const bytes = statSync(path.join(outDir, file.name)).size;
    log(
      `  ${file.name.padEnd(64)} ${String(bytes).padStart(7)} bytes ${String(file.events).padStart(4)} events`,
    );
  }
}
