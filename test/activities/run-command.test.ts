import { rmSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
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

  it('keeps reporting output after its spill files are unlinked', async () => {
    const taskId = await tasks.start({
      command: 'for i in $(seq 1 40); do echo line$i; sleep 0.05; done; sleep 30',
      description: 'Unlinked',
      background: true,
    });
    await expect.poll(async () => (await tasks.snapshot(taskId, undefined)).stdout.bytes).toBeGreaterThan(0);
    const snapshot = await tasks.snapshot(taskId, undefined);
    const spillPath = snapshot.stdout.spillPath ?? '';
    rmSync(spillPath);
    rmSync(spillPath.replace(/\.stdout$/, '.stderr'));
    // Every line still reaches the server: heartbeats read through the open handles.
    await expect
      .poll(async () => (await tasks.snapshot(taskId, undefined)).stdout.bytes, { timeout: 10_000 })
      .toBe(Array.from({ length: 40 }, (_, i) => `line${i + 1}\n`).join('').length);
    expect(await tasks.kill(taskId, undefined)).toBe('killed');
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
