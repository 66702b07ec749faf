/**
 * Eager workflow start: tools whose client shares the command worker's `NativeConnection` ask the
 * server to hand each run's first workflow task straight back to that worker.
 */
import { Client } from '@temporalio/client';
import { beforeAll, expect, it } from 'vitest';
import type { Tool, ToolResult } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';

const suite = useDevServerWithWorker();
let tools: Record<string, Tool>;

beforeAll(() => {
  const client = new Client({ connection: suite.env.nativeConnection, namespace: 'default' });
  tools = Object.fromEntries(
    createBashTools({ client, taskQueue: suite.worker.taskQueue, eagerStart: true }).map((tool) => [
      tool.name,
      tool,
    ]),
  );
});

const text = (result: ToolResult) => result.content.map((block) => block.text).join('');

it('runs foreground and background commands with eager start on the worker’s own connection', async () => {
  expect(text(await (tools.bash as Tool).execute({ command: 'echo eager', description: 'Eager' }))).toBe(
    'eager\n',
  );
  const started = text(
    await (tools.bash as Tool).execute({
      command: 'echo bg',
      description: 'Eager bg',
      run_in_background: true,
    }),
  );
  const taskId = started.replace('started background task ', '');
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
