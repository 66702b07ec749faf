/**
 * A monitor's lines outlive the processes on their way: the command worker (a real process)
 * SIGKILLed while the command prints, and the agent host's worker stopped while a notice waits.
 * Each matching line comes once, in order, before the completion notice.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands, type RunningWorker } from '../helpers/bash-worker.js';
import { NoticeInbox, noticeOutcome } from '../helpers/notices.js';
import { waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
const workers: WorkerProcess[] = [];
const agentWorkers: RunningWorker[] = [];
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-monitor-spill-'));
// The tasks' workdir, where their gate files live: a command sees its workdir as the test does.
const shared = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-monitor-work-'));

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.crash()));
  await Promise.all(agentWorkers.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  await endLeftCommands(spillDir);
  await env?.teardown();
});

describe('a monitor across restarts', () => {
  it.each([
    ['', false],
    [', and a kill that waited for its host reported the end', true],
  ])(
    'sends the lines a command printed and ended with while no worker ran, before its completion notice%s',
    async (_, killWhileDown) => {
      const taskQueue = `monitor-${randomUUID()}`;
      const hostId = `host-${randomUUID().slice(0, 8)}`;
      const args = ['--host-id', hostId, '--spill-dir', spillDir, '--workdir', shared];
      const start = async () => {
        const worker = await startWorkerProcess(env, taskQueue, args);
        workers.push(worker);
        return worker;
      };
      const agentTaskQueue = `agent-${randomUUID()}`;
      const inbox = new NoticeInbox();
      agentWorkers.push(await startAgentWorker(env, { taskQueue: agentTaskQueue, agents: inbox }));
      const tools = createBashTools({ client: env.client, taskQueue, agentTaskQueue });
      const bash = tools.find((tool) => tool.name === 'bash') as Tool;
      const gate = randomUUID();
      const worker = await start();
      const exec = agent(`session-${randomUUID()}`);
      const taskId = await startBackground(
        bash,
        `echo "ERROR 1"; while [ ! -e ${gate} ]; do sleep 0.05; done; echo "ERROR 2"; echo "ERROR 3"`,
        exec,
        { notify_on: '^ERROR' },
      );
      await waitFor(() => inbox.notices.length === 1, 15_000);
      await worker.crash();
      writeFileSync(path.join(shared, gate), '');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      if (killWhileDown) {
        const kill = tools.find((tool) => tool.name === 'bash_kill') as Tool;
        expect(text(await kill.execute({ task_id: taskId }, exec))).toMatch(
          /^kill of background task \S+ is pending/,
        );
      }
      await start();
      expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
      expect(inbox.notices.map((notice) => notice.content.split('\n').slice(1).join('|'))).toEqual([
        'ERROR 1',
        'ERROR 2|ERROR 3',
        '[output]|ERROR 1|ERROR 2|ERROR 3',
      ]);
    },
  );

  it('delivers each matching line once and in order across a worker SIGKILL and an agent worker restart', async () => {
    const taskQueue = `monitor-${randomUUID()}`;
    const hostId = `host-${randomUUID().slice(0, 8)}`;
    const startWorker = async () => {
      const worker = await startWorkerProcess(env, taskQueue, [
        '--host-id',
        hostId,
        '--spill-dir',
        spillDir,
        '--workdir',
        shared,
      ]);
      workers.push(worker);
      return worker;
    };
    const agentTaskQueue = `agent-${randomUUID()}`;
    const inbox = new NoticeInbox();
    const startAgent = async () => {
      const worker = await startAgentWorker(env, { taskQueue: agentTaskQueue, agents: inbox });
      agentWorkers.push(worker);
      return worker;
    };
    const tools = createBashTools({ client: env.client, taskQueue, agentTaskQueue });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const gate = randomUUID();
    const open = (n: number) => writeFileSync(path.join(shared, `${gate}.${n}`), '');
    const waitAt = (n: number) => `while [ ! -e ${gate}.${n} ]; do sleep 0.05; done`;

    let worker = await startWorker();
    const agentWorker = await startAgent();
    const exec = agent(`session-${randomUUID()}`);
    const taskId = await startBackground(
      bash,
      `echo "ERROR 1"; ${waitAt(1)}; echo "ERROR 2"; echo fine; ${waitAt(2)}; echo "ERROR 3"`,
      exec,
      { notify_on: '^ERROR' },
    );
    await waitFor(() => inbox.notices.length === 1, 15_000);

    // The worker dies; the command prints its next line while no worker runs.
    await worker.crash();
    open(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    worker = await startWorker();
    await waitFor(
      () => inbox.notices.length === 2,
      30_000,
      50,
      () => JSON.stringify(inbox.notices),
    );

    // The agent host's worker is down when the last line matches: its notice waits for it.
    await agentWorker.stop();
    open(2);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(inbox.notices).toHaveLength(2);
    await startAgent();
    expect(await noticeOutcome(env.client, taskId)).toBe('delivered');

    const header = (n: number) =>
      `background bash task ${taskId} printed 1 line matching /^ERROR/:\nERROR ${n}`;
    expect(inbox.notices.map((notice) => notice.noticeId)).toEqual([
      `${taskId}-match-1`,
      `${taskId}-match-2`,
      `${taskId}-match-3`,
      `${taskId}-notice`,
    ]);
    expect(inbox.notices.slice(0, 3).map((notice) => notice.content)).toEqual([
      header(1),
      header(2),
      header(3),
    ]);
    expect(inbox.notices[3]?.content.split('\n')[0]).toBe(
      `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.`,
    );
  });
});
