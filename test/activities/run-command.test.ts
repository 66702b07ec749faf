import { existsSync, rmSync, statSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { tailText } from '../../src/shared/stream-text.js';
import type { TaskId } from '../../src/shared/task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';

const THIRTY_DAYS_MS = 30 * 24 * 60 * 60_000;

const suite = useDevServerWithWorker({ executor: { maxTimeoutMs: THIRTY_DAYS_MS } });
let tasks: BashTasks;

beforeAll(async () => {
  tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
});

describe('the command activity', () => {
  it('leaves a timeout longer than Node timers can hold to the workflow, instead of firing at once', async () => {
    const taskId = await tasks.start({
      command: 'sleep 0.3; echo done',
      description: 'Long timeout',
      background: false,
      timeoutMs: THIRTY_DAYS_MS,
    });
    const result = await tasks.result(taskId);
    expect({ signal: result.signal, timedOutAfterMs: result.timedOutAfterMs }).toEqual({
      signal: null,
      timedOutAfterMs: undefined,
    });
  });

  it('keeps the output of a command whose spill files were unlinked, for its result', async () => {
    const taskId = await tasks.start({
      command: 'for i in $(seq 1 40); do echo line$i; sleep 0.05; done; sleep 1',
      description: 'Unlinked',
      background: true,
    });
    // The first heartbeat names the spill file; unlink both files once the command has written some.
    await expect.poll(async () => (await tasks.snapshot(taskId, undefined)).stdout.spillPath).toBeDefined();
    const spillPath = (await tasks.snapshot(taskId, undefined)).stdout.spillPath ?? '';
    await expect.poll(() => (existsSync(spillPath) ? statSync(spillPath).size : 0)).toBeGreaterThan(0);
    rmSync(spillPath);
    rmSync(spillPath.replace(/\.stdout$/, '.stderr'));
    // Every line still reaches the result: the command activity reads through the handles it holds.
    const result = await tasks.result(taskId as TaskId);
    expect(tailText(result.stdout)).toBe(Array.from({ length: 40 }, (_, i) => `line${i + 1}\n`).join(''));
  });

  it('fails a command past the kernel argument limit at once, instead of retrying it forever', async () => {
    // The tools refuse such a command; a workflow started another way must still end.
    const taskId = await tasks.start({
      command: `echo ${'x'.repeat(200_000)}`,
      description: 'Too long for exec',
      background: false,
    });
    await expect(tasks.result(taskId)).rejects.toThrow('could not start bash: spawn E2BIG');
  });
});
