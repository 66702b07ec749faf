/**
 * Eager workflow start: tools whose client shares the command worker's `NativeConnection` ask the
 * server to hand each run's first workflow task straight back to that worker.
 */
import { Client } from '@temporalio/client';
import { beforeAll, expect, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;

beforeAll(() => {
  const client = new Client({ connection: suite.env.nativeConnection, namespace: 'default' });
  tools = toolsByName(createBashTools({ client, taskQueue: suite.worker.taskQueue, eagerStart: true }));
});

it('runs foreground and background commands with eager start on the worker’s own connection', async () => {
  expect(text(await (tools.bash as Tool).execute({ command: 'echo eager', description: 'Eager' }))).toBe(
    'eager\n',
  );
  const taskId = await startBackground(tools.bash, 'echo bg', {}, { description: 'Eager bg' });
  await expect
    .poll(async () => text(await (tools.bash_output as Tool).execute({ task_id: taskId, wait_ms: 2_000 })))
    .toMatch(/^bg\n\[status: (running|completed, exit code: 0)\]$/);
});

it('is refused at once, in one line, for a client with a plain connection', () => {
  expect(() =>
    createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue, eagerStart: true }),
  ).toThrow(
    "eagerStart needs a client on the command worker's NativeConnection (new Client({ connection: nativeConnection }))",
  );
});
