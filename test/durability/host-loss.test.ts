/**
 * A host that never comes back (docs/DURABILITY.md, "A host that is lost"). Two worker hosts on
 * this machine, each its own host id and spill directory: host A is killed with every process it
 * started (its worker SIGKILLed, its supervisors made to SIGKILL their commands), and never
 * returns. A task started with `on_host_loss: "restart"` runs its command again on host B after the
 * lost window, its output going on after the restart line; one started without ends lost, its last
 * output readable. A worker that is merely slow (back within the lost window) restarts nothing.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startedTaskId } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { waitFor } from '../helpers/processes.js';
import { readToEnd, splitAnswer } from '../helpers/read-to-end.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** How long a task waits for a worker on its host before the host counts as lost. */
const LOST_AFTER_MS = 8_000;
/** The command attempts' heartbeat timeout: short, so a dead worker's attempt is given up soon. */
const HEARTBEAT_TIMEOUT_MS = 4_000;

let env: TestWorkflowEnvironment;
const workers: WorkerProcess[] = [];
const dirs: string[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), `durable-bash-host-loss-${name}-`));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  for (const worker of workers) await worker.crash();
  for (const dir of dirs) await endLeftCommands(dir).catch(() => undefined);
  await env?.teardown();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A worker host of `taskQueue`: its own host id and spill directory. */
async function startHost(taskQueue: string, hostId: string, spillDir: string, workdir: string) {
  const worker = await startWorkerProcess(env, taskQueue, [
    ...['--host-id', hostId, '--spill-dir', spillDir, '--workdir', workdir],
    ...['--lost-after-ms', String(LOST_AFTER_MS), '--heartbeat-timeout-ms', String(HEARTBEAT_TIMEOUT_MS)],
    // Which host runs a command is the subject, not how commands are kept apart.
    ...['--isolation', 'none'],
  ]);
  workers.push(worker);
  return worker;
}

/** A command that marks `runs` once per start, then prints a numbered line every 0.2 s for a minute. */
const printer = (runs: string, name: string) =>
  `echo run >> ${runs}; for i in $(seq 1 300); do echo "${name} $i"; sleep 0.2; done`;

/**
 * Two hosts of a fresh task queue, A's worker started, sharing one workdir; the tools of one
 * session; and `start`, a background bash call that answers its task id.
 */
async function twoHosts(name: string) {
  const taskQueue = `${name}-${randomUUID()}`;
  const workdir = tempDir('work');
  const [spillA, spillB] = [tempDir('spill-a'), tempDir('spill-b')];
  const [hostA, hostB] = [`host-a-${randomUUID().slice(0, 6)}`, `host-b-${randomUUID().slice(0, 6)}`];
  const workerA = await startHost(taskQueue, hostA, spillA, workdir);
  const tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
  const session = agent(`${name}-${randomUUID().slice(0, 8)}`);
  const start = async (command: string, extra: Record<string, unknown> = {}) =>
    startedTaskId(
      text(
        await tools.bash.execute(
          { command, description: 'Print lines', run_in_background: true, ...extra },
          session,
        ),
      ),
    );
  return { taskQueue, workdir, spillA, spillB, hostA, hostB, workerA, tools, session, start };
}

describe('a host that never comes back', () => {
  it('restarts an on_host_loss "restart" task on another host, and ends the other lost with its last output', async () => {
    const { taskQueue, workdir, spillA, spillB, hostA, hostB, workerA, tools, session, start } =
      await twoHosts('host-loss');
    const [runsR, runsL] = [path.join(workdir, 'runs-r'), path.join(workdir, 'runs-l')];
    for (const file of [runsR, runsL]) writeFileSync(file, '');
    const restarting = await start(printer(runsR, 'r'), { on_host_loss: 'restart' });
    const losing = await start(printer(runsL, 'l'), {});
    await waitFor(() => readFileSync(runsR, 'utf8') === 'run\n' && readFileSync(runsL, 'utf8') === 'run\n');
    await sleep(1_000);
    const firstRead = splitAnswer(text(await tools.bash_output.execute({ task_id: restarting }, session)));
    expect(firstRead.shown).toMatch(/^r 1\n/);

    // Host B joins; host A goes away for good, with every command it started.
    await startHost(taskQueue, hostB, spillB, workdir);
    await workerA.crash();
    await endLeftCommands(spillA);

    const restartLine = `[restarted on ${hostB} after ${hostA} was lost]\n`;
    let shown = '';
    const deadline = Date.now() + 90_000;
    while (!shown.includes('r 3\n', shown.indexOf(restartLine))) {
      expect(Date.now()).toBeLessThan(deadline);
      const answer = splitAnswer(
        text(await tools.bash_output.execute({ task_id: restarting, wait_ms: 2_000 }, session)),
      );
      shown += answer.shown;
      if (shown.includes(restartLine))
        expect(answer.status).toBe('[status: running (restarted once after its host was lost)]');
    }
    // The output goes on on host B from the restart line, the command run from its start there.
    expect(shown.slice(shown.indexOf(restartLine))).toMatch(/^\[restarted on [^\n]+\]\nr 1\nr 2\nr 3\n/);
    expect(readFileSync(runsR, 'utf8')).toBe('run\nrun\n');
    expect(text(await tools.bash_list.execute({}, session))).toContain(
      'running (restarted once after its host was lost)',
    );

    // Without on_host_loss the task ends lost, with the output its host last reported.
    const lost = await readToEnd(tools.bash_output, losing, session, { waitMs: 2_000, timeoutMs: 60_000 });
    expect(lost.status).toBe(
      `[status: lost: no worker on its host ${hostA} came back within ${LOST_AFTER_MS}ms; the exit status is unknown]`,
    );
    expect(lost.output).toMatch(/^l 1\n/);
    expect(readFileSync(runsL, 'utf8')).toBe('run\n');

    // The restarted task is the run on host B: a kill ends it there.
    expect(text(await tools.bash_kill.execute({ task_id: restarting }, session))).toMatch(
      /^killed background task /,
    );
    const killed = await readToEnd(tools.bash_output, restarting, session, { timeoutMs: 30_000 });
    expect(killed.status).toBe('[status: killed by SIGTERM (restarted once after its host was lost)]');
  }, 240_000);

  it('never restarts on a host it lost before: with only that one left, it ends lost, and a kill while it chooses ends it too', async () => {
    const { taskQueue, workdir, spillA, spillB, hostA, hostB, workerA, tools, session, start } =
      await twoHosts('host-back');
    const [runsX, runsY] = [path.join(workdir, 'runs-x'), path.join(workdir, 'runs-y')];
    for (const file of [runsX, runsY]) writeFileSync(file, '');
    const [waiting, killed] = [
      await start(printer(runsX, 'x'), { on_host_loss: 'restart' }),
      await start(printer(runsY, 'y'), { on_host_loss: 'restart' }),
    ];
    await waitFor(() => readFileSync(runsX, 'utf8') === 'run\n' && readFileSync(runsY, 'utf8') === 'run\n');

    // A is lost, both restart on B; then A comes back and B is lost.
    const workerB = await startHost(taskQueue, hostB, spillB, workdir);
    await workerA.crash();
    await endLeftCommands(spillA);
    await waitFor(
      () => readFileSync(runsX, 'utf8') === 'run\nrun\n' && readFileSync(runsY, 'utf8') === 'run\nrun\n',
      60_000,
    );
    await startHost(taskQueue, hostA, spillA, workdir);
    await workerB.crash();
    await endLeftCommands(spillB);

    // Once B's lost window passed, each task asks for a host other than A: kill one meanwhile.
    const choosing = async (taskId: string) =>
      ((await env.client.workflow.getHandle(taskId).describe()).raw.pendingActivities ?? []).some(
        (activity) => activity.activityType?.name === 'chooseHost',
      );
    const until = Date.now() + 60_000;
    while (!(await choosing(killed))) {
      expect(Date.now()).toBeLessThan(until);
      await sleep(200);
    }
    await tools.bash_kill.execute({ task_id: killed }, session);
    const afterKill = await readToEnd(tools.bash_output, killed, session, { timeoutMs: 30_000 });
    expect(afterKill.status).toBe(
      `[status: lost: its host ${hostB} was lost, and it was killed before it started again on another host (restarted once after its host was lost)]`,
    );
    const lost = await readToEnd(tools.bash_output, waiting, session, { waitMs: 2_000, timeoutMs: 60_000 });
    expect(lost.status).toBe(
      `[status: lost: its host ${hostB} was lost, and no other worker of task queue ${taskQueue} took the command within ${LOST_AFTER_MS}ms (restarted once after its host was lost)]`,
    );
    // Host A, back and able, ran neither again.
    expect(readFileSync(runsX, 'utf8')).toBe('run\nrun\n');
    expect(readFileSync(runsY, 'utf8')).toBe('run\nrun\n');
  }, 240_000);

  it('restarts nothing when the host is merely slow: back within the lost window, it re-attaches', async () => {
    const taskQueue = `host-slow-${randomUUID()}`;
    const workdir = tempDir('work');
    const spill = tempDir('spill');
    const hostId = `host-s-${randomUUID().slice(0, 6)}`;
    const worker = await startHost(taskQueue, hostId, spill, workdir);
    const tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
    const session = agent(`host-slow-${randomUUID().slice(0, 8)}`);
    const runs = path.join(workdir, 'runs');
    writeFileSync(runs, '');
    const taskId = startedTaskId(
      text(
        await tools.bash.execute(
          {
            command: `echo run >> ${runs}; for i in $(seq 1 40); do echo "s $i"; sleep 0.2; done; exit 4`,
            description: 'Print lines',
            run_in_background: true,
            on_host_loss: 'restart',
          },
          session,
        ),
      ),
    );
    await waitFor(() => readFileSync(runs, 'utf8') === 'run\n');
    // Away for half the lost window: its command runs on under its supervisor meanwhile.
    await worker.crash();
    await sleep(LOST_AFTER_MS / 2);
    await startHost(taskQueue, hostId, spill, workdir);
    const end = await readToEnd(tools.bash_output, taskId, session, { waitMs: 2_000, timeoutMs: 60_000 });
    expect(end.output).toBe(Array.from({ length: 40 }, (_, i) => `s ${i + 1}\n`).join(''));
    expect(end.status).toBe('[status: completed, exit code: 4]');
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
  }, 120_000);
});
