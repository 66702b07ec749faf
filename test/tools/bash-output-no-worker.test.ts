import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import type { Tool, ToolResult } from '../../src/tools/types.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { processesMatching } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
// The worker runs in its own process, so the test can kill it the way a crash would.
let workerProcess: WorkerProcess | undefined;
let restarted: RunningWorker | undefined;
const taskQueue = `test-${randomUUID()}`;
const marker = 7000 + Math.floor(Math.random() * 1000);

beforeAll(async () => {
  env = await createDevServerEnv();
  workerProcess = await startWorkerProcess(env, taskQueue);
});

afterAll(async () => {
  await workerProcess?.crash();
  await restarted?.stop();
  // A failed test may leave the command running; end it here.
  if (processesMatching(new RegExp(`^sleep ${marker}$`)).length > 0)
    execFileSync('pkill', ['-f', `^sleep ${marker}$`]);
  await env?.teardown();
});

const text = (result: ToolResult) => result.content.map((block) => block.text).join('');

describe('bash_output without a worker', () => {
  it('answers within seconds with what the server holds, moves no read position, and and reads on once a worker is back', async () => {
    const tools = createBashTools({ client: env.client, taskQueue });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const bashOutput = tools.find((tool) => tool.name === 'bash_output') as Tool;
    const started = text(
      await bash.execute({
        command: `echo before; sleep ${marker}`,
        description: 'Sleep',
        run_in_background: true,
      }),
    );
    const taskId = started.replace('started background task ', '');
    const tasks = new BashTasks({ client: env.client, taskQueue });
    await expect
      .poll(async () => (await tasks.snapshot(taskId, undefined)).stdout.bytes, { timeout: 15_000 })
      .toBe(7);

    await workerProcess?.crash();

    const began = Date.now();
    const expected =
      'before\n[status: running]\n[task worker unavailable: this is the output the server holds; the read position did not move, so it will be shown again]';
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(expected);
    const tookMs = Date.now() - began;
    expect(tookMs).toBeLessThan(10_000);
    // Nothing was consumed: the same output comes again.
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(expected);

    // A worker is back on the same host and re-attaches to the command: the claims that waited
    // expired unapplied, and the output is read once.
    restarted = await startBashWorker(env, {}, taskQueue);
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe('before\n[status: running]');
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe('(no new output)\n[status: running]');
    expect(await tasks.kill(taskId, undefined)).toBe('killed');
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(
      '(no new output)\n[status: killed by SIGTERM]',
    );
    expect(processesMatching(new RegExp(`^sleep ${marker}$`))).toEqual([]);
  });
});
