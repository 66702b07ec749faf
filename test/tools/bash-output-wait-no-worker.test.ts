// `bash_output` with `wait_ms` while no worker is alive: the wait asks the server alone, runs its
// full time when nothing new comes, and then answers as a read with no worker does.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { WORKER_UNAVAILABLE } from '../../src/tools/render.js';
import type { Tool, ToolResult } from '../../src/tools/types.js';
import { processesMatching } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
let workerProcess: WorkerProcess | undefined;
const taskQueue = `test-${randomUUID()}`;
const marker = 8000 + Math.floor(Math.random() * 1000);

beforeAll(async () => {
  env = await createDevServerEnv();
  workerProcess = await startWorkerProcess(env, taskQueue);
});

afterAll(async () => {
  await workerProcess?.crash();
  // The command outlives the crashed worker (its supervisor does); end it here.
  if (processesMatching(new RegExp(`^sleep ${marker}$`)).length > 0)
    execFileSync('pkill', ['-f', `^sleep ${marker}$`]);
  await env?.teardown();
});

const text = (result: ToolResult) => result.content.map((block) => block.text).join('');

describe('bash_output wait_ms without a worker', () => {
  it('waits its full time on what the server reports, then answers as a read with no worker', async () => {
    const tools = createBashTools({ client: env.client, taskQueue });
    const tool = (name: string) => tools.find((candidate) => candidate.name === name) as Tool;
    const started = text(
      await tool('bash').execute({
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
    // Read what there is while the worker lives, so nothing is left unread.
    expect(text(await tool('bash_output').execute({ task_id: taskId }))).toBe('before\n[status: running]');

    await workerProcess?.crash();
    workerProcess = undefined;
    const begun = Date.now();
    const read = text(await tool('bash_output').execute({ task_id: taskId, wait_ms: 2_000 }));
    const elapsed = Date.now() - begun;
    expect(read).toBe(`(no new output)\n[status: running]\n${WORKER_UNAVAILABLE}`);
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
  });
});
