/**
 * Tasks outlive their worker: command workers as real processes (the CLI) that the tests SIGKILL
 * and start again with the same host identity and spill directory, against a real dev server.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import Long from 'long';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { endedBy } from '../../src/client/task-kill.js';
import { endSessionNetworks } from '../../src/command-host/containment/session-isolation.js';
import { isSameProcess, readRecord } from '../../src/command-host/supervisor/supervisor-records.js';
import { readAttempt, taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { statusLine } from '../../src/shared/status-line.js';
import { AttemptFailureType, type TaskId } from '../../src/shared/task.js';
import { hostTaskQueue } from '../../src/shared/task-queues.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { heldBytes, printedBytes } from '../helpers/printed.js';
import { processesMatching } from '../helpers/processes.js';
import { removeDir } from '../helpers/remove-dir.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.crash()));
});

afterAll(async () => {
  // A failed test may leave a command behind: end every supervisor of this file's hosts.
  for (const dir of spillDirs) await endLeftCommands(dir);
  await env?.teardown();
  // Their sessions' networks end first: their holders run the supervisor copied into the spill
  // directory, and once that is gone the network's end no longer knows them for its own.
  for (const dir of spillDirs) endSessionNetworks(dir);
  for (const dir of [...spillDirs, shared]) removeDir(dir);
});

const spillDirs: string[] = [];
// The tasks' workdir, where their marker and gate files live: a command sees its workdir as the
// test does (its /tmp, with sessions kept apart, is its session's own).
const shared = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-reattach-work-'));

/** A host: its identity, spill directory and task queue; its worker can crash and come back. */
function host(extraArgs: string[] = [], taskQueue = `reattach-${randomUUID()}`) {
  const hostId = `host-${randomUUID().slice(0, 8)}`;
  const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-reattach-'));
  spillDirs.push(spillDir);
  const tasks = new BashTasks({ client: env.client, taskQueue });
  return {
    hostId,
    spillDir,
    taskQueue,
    tasks,
    async start(): Promise<WorkerProcess> {
      const worker = await startWorkerProcess(env, taskQueue, [
        '--host-id',
        hostId,
        '--spill-dir',
        spillDir,
        '--workdir',
        shared,
        ...extraArgs,
      ]);
      workers.push(worker);
      return worker;
    },
  };
}

/**
 * Reads a task through BashTasks (what `bash_output` calls, seen before it is text: reads a worker
 * did not answer are skipped) until it ends; every read's stdout, in order, and the final state.
 */
async function readToEndThroughClient(tasks: BashTasks, taskId: TaskId, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let stdout = '';
  for (;;) {
    const read = await tasks.read(taskId, undefined);
    if (!read.unclaimed) stdout += read.stdout.text;
    if (read.state.status !== 'running' && !read.unclaimed) return { stdout, status: statusLine(read.state) };
    if (Date.now() > deadline) throw new Error(`task still running after ${timeoutMs}ms: ${stdout}`);
    await sleep(200);
  }
}

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}\n`).join('');

/** A marker file each run of a command appends to, so a second run shows. */
function marker(): string {
  const file = path.join(mkdtempSync(path.join(shared, 'marker-')), 'runs');
  writeFileSync(file, '');
  return file;
}

const runs = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

/** A background task whose command marks each of its runs, then (after `between`) prints `done`. */
async function startMarked(h: ReturnType<typeof host>, description: string, between = '') {
  const ran = marker();
  const taskId = await h.tasks.start({
    command: `echo run >> ${ran}; ${between}echo done`,
    description,
    background: true,
  });
  return { taskId, ran };
}

/** The task ended as its one run made it: `done`, exit code 0. */
async function expectDoneOnce(h: ReturnType<typeof host>, taskId: TaskId, ran: string) {
  expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
    stdout: 'done\n',
    status: '[status: completed, exit code: 0]',
  });
  expect(runs(ran)).toBe(1);
}

describe('a task whose worker crashed', () => {
  it('re-attaches: the output written while no worker was alive comes once, in order, with the exact exit code', async () => {
    const h = host();
    const worker = await h.start();
    const ran = marker();
    const taskId = await h.tasks.start({
      command: `echo run >> ${ran}; for i in $(seq 1 25); do echo "line $i"; sleep 0.2; done; exit 7`,
      description: 'Counts through a worker crash',
      background: true,
    });
    let before = '';
    while (!before.includes('line 3\n')) {
      before += (await h.tasks.read(taskId, undefined)).stdout.text;
      await sleep(100);
    }
    await worker.crash();
    await sleep(2_000); // The command keeps writing with no worker alive.
    const restartedAt = Date.now();
    await h.start();
    const rest = await readToEndThroughClient(h.tasks, taskId);
    expect(before + rest.stdout).toBe(numbered(25));
    expect(rest.status).toBe('[status: completed, exit code: 7]');
    expect(runs(ran)).toBe(1);
    console.log(`re-attached task's first new output within ${Date.now() - restartedAt}ms of the restart`);
  });

  it("keeps the command's stdin: a write while no worker is alive is refused and never lands, later ones go in", async () => {
    const h = host();
    const worker = await h.start();
    const taskId = await h.tasks.start({
      command: 'while read -r line; do echo "got $line"; done; echo eof',
      description: 'Reads its stdin through a worker crash',
      background: true,
      keepStdinOpen: true,
    });
    expect(await h.tasks.writeStdin(taskId, undefined, { text: 'before\n', close: false })).toEqual({
      kind: 'written',
      bytes: 7,
      closed: false,
    });
    await worker.crash();
    // No worker runs the task's workflow: the write is refused unwritten, and stays so after the restart.
    await expect(h.tasks.writeStdin(taskId, undefined, { text: 'lost\n', close: false })).rejects.toThrow(
      `task ${taskId} did not take the write within 5000ms (no worker runs its workflow); nothing was written`,
    );
    await h.start();
    expect(await h.tasks.writeStdin(taskId, undefined, { text: 'after\n', close: true })).toEqual({
      kind: 'written',
      bytes: 6,
      closed: true,
    });
    const rest = await readToEndThroughClient(h.tasks, taskId);
    expect(rest.stdout).toBe('got before\ngot after\neof\n');
    expect(rest.status).toBe('[status: completed, exit code: 0]');
  });

  it('runs the command exactly once when the worker dies the moment the supervisor claimed the task', async () => {
    const h = host();
    const worker = await h.start();
    const { taskId, ran } = await startMarked(h, 'Claimed, then the worker dies', 'sleep 1; ');
    const state = taskFiles(h.spillDir, taskId).state;
    const deadline = Date.now() + 10_000;
    while (!readFileSyncOrEmpty(state) && Date.now() < deadline) await sleep(1);
    await worker.crash();
    await h.start();
    await expectDoneOnce(h, taskId, ran);
  });

  it('starts the command once, and soon, when its worker died after taking the attempt and before starting it', async () => {
    // Without the restarted worker's help only the heartbeat timeout (a minute here) ends an
    // attempt that left no supervisor behind.
    const heartbeatTimeoutMs = 60_000;
    const h = host(['--heartbeat-timeout-ms', String(heartbeatTimeoutMs)]);
    const worker = await h.start();
    const { taskId, ran } = await startMarked(h, 'Its worker dies before it starts it');
    const files = taskFiles(h.spillDir, taskId);
    // The moment the attempt is remembered, before the command's start (which takes the new
    // session's identity and network first): a busy wait, then SIGKILL at once.
    const deadline = Date.now() + 10_000;
    while (!existsSync(files.attempt) && Date.now() < deadline);
    worker.child.kill('SIGKILL');
    const claimedAtCrash = existsSync(files.state);
    const crashedAt = Date.now();
    await worker.crash();
    await h.start();
    await expectDoneOnce(h, taskId, ran);
    expect(claimedAtCrash).toBe(false);
    const { events } = await env.client.workflow.getHandle(taskId).fetchHistory();
    const failures = (events ?? []).flatMap((event) => {
      const started = event.activityTaskStartedEventAttributes;
      const failed = event.activityTaskFailedEventAttributes;
      return [
        started?.lastFailure?.message,
        failed?.failure?.cause?.message ?? failed?.failure?.message,
      ].filter((message): message is string => message !== undefined);
    });
    expect(failures).toContain('the worker running this attempt restarted before it started the command');
    expect((events ?? []).filter((event) => event.activityTaskTimedOutEventAttributes)).toEqual([]);
    expect(Date.now() - crashedAt).toBeLessThan(heartbeatTimeoutMs);
  }, 120_000);

  it('takes a kill issued while the worker is down at once, and ends the command when a worker is back', async () => {
    const { h, worker, tag, taskId } = await sleeperOnHost('Killed while its worker is down');
    await worker.crash();
    const asked = Date.now();
    expect(await h.tasks.kill(taskId, undefined)).toBe('pending');
    expect(Date.now() - asked).toBeLessThan(8_000);
    expect(processesMatching(new RegExp(`^sleep ${tag}$`))).toHaveLength(1);
    await expectKilledOnRestart(h, tag, taskId);
  });

  it('keeps the own end of a command that finished while its worker was down, before the kill sent then reached it', async () => {
    // The kill is recorded while no worker is on the host; the command exits 4 before one is back,
    // so the kill ends nothing, and neither the run nor a second kill may call that end a kill.
    const h = host();
    const worker = await h.start();
    const gate = path.join(mkdtempSync(path.join(shared, 'gate-')), 'open');
    const taskId = await h.tasks.start({
      command: `echo started; while [ ! -e ${gate} ]; do sleep 0.05; done; exit 4`,
      description: 'Ends on its own while its worker is down and a kill waits',
      background: true,
    });
    await expect.poll(() => printedBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(8);
    await worker.crash();
    writeFileSync(gate, '');
    await expect.poll(() => existsSync(taskFiles(h.spillDir, taskId).exit), { timeout: 10_000 }).toBe(true);
    expect(await h.tasks.kill(taskId, undefined)).toBe('pending');
    await h.start();
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: 'started\n',
      status: '[status: completed, exit code: 4]',
    });
    const result = await env.client.workflow.getHandle(taskId).result();
    expect(result.killed).toBe(false);
    expect(endedBy(result)).toBe('already-finished');
    expect(await h.tasks.kill(taskId, undefined)).toBe('already-finished');
  });

  it("ends a kill at once even when the restarted worker cannot fail its predecessor's attempt", async () => {
    // Without its attempt file the start scan cannot fail the attempt the crashed worker left: the
    // stop's recorded end settles the run, not that attempt's heartbeat timeout (5 minutes).
    const { h, worker, tag, taskId } = await sleeperOnHost(
      'Killed while its worker is down, its attempt file gone',
    );
    await worker.crash();
    rmSync(taskFiles(h.spillDir, taskId).attempt);
    expect(await h.tasks.kill(taskId, undefined)).toBe('pending');
    await expectKilledOnRestart(h, tag, taskId);
  });

  /** A worker comes back on the host of a task killed while none was there: the kill takes effect. */
  async function expectKilledOnRestart(h: ReturnType<typeof host>, tag: number, taskId: TaskId) {
    await h.start();
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: 'started\n',
      status: '[status: killed by SIGTERM]',
    });
    expect(processesMatching(new RegExp(`^sleep ${tag}$`))).toEqual([]);
  }

  it('re-attaches before the heartbeat timeout when the attempt its restarted worker was given never reached it', async () => {
    // The server hands a task to a poll whose answer can go missing; the attempt is then started
    // on the server, run by no worker, and only its heartbeat timeout (a minute here) would end it.
    const heartbeatTimeoutMs = 60_000;
    const h = host(['--heartbeat-timeout-ms', String(heartbeatTimeoutMs)]);
    const worker = await h.start();
    const flag = path.join(mkdtempSync(path.join(shared, 'flag-')), 'go-on');
    const taskId = await h.tasks.start({
      command: `echo started; until [ -e ${flag} ]; do sleep 0.1; done; echo done`,
      description: 'Its re-attach attempt is lost on the way',
      background: true,
    });
    await expect.poll(() => printedBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(8);
    await worker.crash();
    // Another host's worker runs the workflow meanwhile, so the retry is scheduled with none of h's.
    await host([], h.taskQueue).start();
    const attempt = await readAttempt(taskFiles(h.spillDir, taskId).attempt);
    await env.client.activity.fail(
      Buffer.from(attempt?.taskToken ?? '', 'base64'),
      ApplicationFailure.retryable(
        'the worker running this attempt restarted',
        AttemptFailureType.workerRestarted,
      ),
    );
    // The retry on h's own queue, taken by a poll whose answer is dropped.
    const lost = await env.client.withDeadline(Date.now() + 30_000, () =>
      env.client.workflowService.pollActivityTaskQueue({
        namespace: 'default',
        taskQueue: { name: hostTaskQueue(h.taskQueue, h.hostId) },
        identity: 'a poll whose answer went missing',
      }),
    );
    expect([lost.workflowExecution?.workflowId, lost.activityType?.name]).toEqual([taskId, 'runCommand']);
    const lostAt = Date.now();
    await h.start();
    writeFileSync(flag, ''); // The command ends: only an attempt can report it.
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: 'started\ndone\n',
      status: '[status: completed, exit code: 0]',
    });
    // The restarted worker failed the lost attempt, and its retry reported the end; no heartbeat
    // timeout came (a retried attempt's failure shows on the start of the next one).
    const { events } = await env.client.workflow.getHandle(taskId).fetchHistory();
    const starts = (events ?? []).flatMap((event) => {
      const started = event.activityTaskStartedEventAttributes;
      return started ? [{ attempt: started.attempt, lastFailure: started.lastFailure?.message }] : [];
    });
    expect(starts).toEqual([
      { attempt: 1, lastFailure: undefined },
      { attempt: 2, lastFailure: 'the attempt never reached the worker the server gave it to' },
    ]);
    expect((events ?? []).filter((event) => event.activityTaskTimedOutEventAttributes)).toEqual([]);
    expect(Date.now() - lostAt).toBeLessThan(heartbeatTimeoutMs);
  }, 120_000);

  it('ends lost at once when its supervisor died with its worker: the restarted worker fails the attempt left behind', async () => {
    const { h, worker, tag, taskId, record } = await sleeperOnHost('Its supervisor dies with its worker');
    await worker.crash();
    // The supervisor first: alive, it could reap the command killed before it and record the end.
    process.kill(record.supervisorPid, 'SIGKILL');
    process.kill(-record.pid, 'SIGKILL');
    await h.start();
    // Well inside the attempt's heartbeat timeout (5 minutes).
    expect(await readToEndThroughClient(h.tasks, taskId, 60_000)).toEqual({
      stdout: 'started\n',
      status: '[status: lost: its supervisor was killed; the exit status is unknown]',
    });
    expect(processesMatching(new RegExp(`^sleep ${tag}$`))).toEqual([]);
  });

  it('still times a foreground command out when its worker was down across the deadline', async () => {
    const h = host();
    const worker = await h.start();
    const taskId = await h.tasks.start({
      command: 'echo start; sleep 60',
      description: 'Times out while its worker is down',
      background: false,
      timeoutMs: 3_000,
    });
    await expect.poll(() => printedBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(6);
    await worker.crash();
    await sleep(4_000); // Past the deadline.
    await h.start();
    const result = await h.tasks.result(taskId);
    expect({ timedOutAfterMs: result.timedOutAfterMs, signal: result.signal }).toEqual({
      timedOutAfterMs: 3_000,
      signal: 'SIGTERM',
    });
  });

  it('never starts a foreground command whose deadline passed while its worker was down before the start', async () => {
    const h = host();
    const worker = await h.start();
    const ran = marker();
    const taskId = await h.tasks.start({
      command: `echo run >> ${ran}`,
      description: 'Its worker dies before it starts it, and the deadline passes',
      background: false,
      timeoutMs: 2_000,
    });
    // The moment the attempt is remembered, before the command's start: SIGKILL at once.
    const files = taskFiles(h.spillDir, taskId);
    const until = Date.now() + 10_000;
    while (!existsSync(files.attempt) && Date.now() < until);
    worker.child.kill('SIGKILL');
    await worker.crash();
    await sleep(3_000); // Past the deadline.
    await h.start();
    const failure = await h.tasks.result(taskId).catch((err: unknown) => err);
    expect((failure as Error).message).toBe(
      `task ${taskId} timed out after 2000ms before any worker started the command`,
    );
    expect(runs(ran)).toBe(0);
  });

  /** A host with a worker, and a background task on it that printed `started` and sleeps `tag` seconds. */
  async function sleeperOnHost(description: string) {
    const h = host();
    const worker = await h.start();
    const tag = 8000 + Math.floor(Math.random() * 1000);
    const taskId = await h.tasks.start({
      command: `echo started; sleep ${tag}`,
      description,
      background: true,
    });
    await expect.poll(() => printedBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(8);
    const record = await readRecord(taskFiles(h.spillDir, taskId).state);
    if (record === undefined) throw new Error(`task ${taskId} has no state record`);
    return { h, worker, tag, taskId, record };
  }

  it('ends lost with its reason when its supervisor is killed, never with a made-up exit code', async () => {
    const { h, tag, taskId, record } = await sleeperOnHost('Its supervisor is killed');
    process.kill(record.supervisorPid, 'SIGKILL');
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: 'started\n',
      status: '[status: lost: its supervisor was killed; the exit status is unknown]',
    });
    // Nothing runs that no one could report.
    await expect.poll(() => processesMatching(new RegExp(`^sleep ${tag}$`))).toEqual([]);
  });

  it('is still ended by a kill when its supervisor stopped answering: the command, then the supervisor', async () => {
    const { h, tag, taskId, record } = await sleeperOnHost('Its supervisor is stopped');
    expect((await h.tasks.read(taskId, undefined)).stdout.text).toBe('started\n');
    process.kill(record.supervisorPid, 'SIGSTOP'); // Signals now wait; SIGKILL still ends it.
    expect(await h.tasks.kill(taskId, undefined)).toBe('killed');
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: '',
      status: '[status: lost: its supervisor was killed; the exit status is unknown]',
    });
    expect(processesMatching(new RegExp(`^sleep ${tag}$`))).toEqual([]);
    expect(isSameProcess(record, 'supervisor')).toBe(false);
  });

  it('ends lost, never runs again, when its records on the host are gone', async () => {
    // With its records gone, no restarted worker can fail the attempt: its heartbeat timeout does.
    const h = host(['--heartbeat-timeout-ms', '5000']);
    const worker = await h.start();
    const ran = marker();
    const taskId = await h.tasks.start({
      command: `echo run >> ${ran}; echo started; sleep 2`,
      description: 'Its records are wiped',
      background: true,
    });
    await expect.poll(() => printedBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(8);
    await worker.crash();
    const files = taskFiles(h.spillDir, taskId);
    for (const file of [files.state, files.exit, files.attempt]) rmSync(file, { force: true });
    await h.start();
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: 'started\n',
      status: '[status: lost: its records on its host are gone; the exit status is unknown]',
    });
    await sleep(2_500);
    expect(runs(ran)).toBe(1);
  });
});

describe('a task closed from outside', () => {
  it('has its command ended by the next worker on its host when it was terminated while the worker was down; ps shows terminated', async () => {
    const h = host();
    const worker = await h.start();
    const tag = 9000 + Math.floor(Math.random() * 1000);
    const owner = `terminated-${randomUUID()}`;
    const taskId = await h.tasks.start({
      command: `sleep ${tag}`,
      description: 'Terminated while its worker is down',
      background: true,
      owner,
    });
    await expect.poll(async () => (await h.tasks.snapshot(taskId, owner)).host).toBeDefined();
    await worker.crash();
    await env.client.workflow.getHandle(taskId).terminate('test: terminated from outside');
    expect(processesMatching(new RegExp(`^sleep ${tag}$`))).toHaveLength(1);
    await h.start();
    await expect.poll(() => processesMatching(new RegExp(`^sleep ${tag}$`)), { timeout: 15_000 }).toEqual([]);
    await expect
      .poll(async () => (await h.tasks.list({ owner })).map((task) => task.status), { timeout: 10_000 })
      .toEqual(['terminated']);
  });

  it('never starts the command again when its workflow is reset', async () => {
    const h = host();
    await h.start();
    const ran = marker();
    const taskId = await h.tasks.start({
      command: `echo run >> ${ran}; sleep 2; echo done`,
      description: 'Reset while it runs',
      background: true,
    });
    await expect.poll(() => runs(ran)).toBe(1);
    const handle = env.client.workflow.getHandle(taskId);
    const description = await handle.describe();
    await env.client.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: taskId, runId: description.runId },
      // The first workflow task: the reset run resolves and starts the command afresh.
      workflowTaskFinishEventId: Long.fromNumber(3),
      requestId: randomUUID(),
      reason: 'test: reset',
    });
    expect(await readToEndThroughClient(h.tasks, taskId)).toEqual({
      stdout: 'done\n',
      status: '[status: completed, exit code: 0]',
    });
    expect(runs(ran)).toBe(1);
  });
});

describe('a host whose worker never comes back', () => {
  it('ends the task lost after the lost window, and a worker that comes back later ends the command', async () => {
    const h = host(['--lost-after-ms', '2000', '--heartbeat-timeout-ms', '5000']);
    const worker = await h.start();
    const tag = 6000 + Math.floor(Math.random() * 1000);
    const taskId = await h.tasks.start({
      command: `echo started; sleep ${tag}`,
      description: 'Its host never comes back',
      background: true,
    });
    await expect.poll(() => printedBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(8);
    // The server has heard of it (the read's heartbeat): the lost task ends with it.
    await expect.poll(() => heldBytes(h.tasks, taskId), { timeout: 15_000 }).toBe(8);
    await worker.crash();
    // The rest of the fleet: another host's worker on the same queue runs the workflow meanwhile.
    await host(['--lost-after-ms', '2000', '--heartbeat-timeout-ms', '5000'], h.taskQueue).start();
    // The attempt times out (no heartbeat for 5 s), its retry waits the lost window on the host's queue.
    expect(await readToEndThroughClient(h.tasks, taskId, 60_000)).toEqual({
      stdout: 'started\n',
      status: `[status: lost: no worker on its host ${h.hostId} came back within 2000ms; the exit status is unknown]`,
    });
    expect(processesMatching(new RegExp(`^sleep ${tag}$`))).toHaveLength(1);
    await h.start();
    await expect.poll(() => processesMatching(new RegExp(`^sleep ${tag}$`)), { timeout: 15_000 }).toEqual([]);
  }, 90_000);
});

function readFileSyncOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
