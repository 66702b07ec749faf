/**
 * A host whose command slots are all taken by running commands still answers reads, stdin writes
 * and kills at once: they run on its control queue, whose slots are their own.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { type BashWorker, createBashWorker } from '../../src/worker/bash-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { timed } from '../helpers/timed.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';

let env: TestWorkflowEnvironment;
let worker: BashWorker;
let running: Promise<void>;
let tools: Tools;
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-full-host-'));
const taskQueue = `full-host-${Date.now()}`;

beforeAll(async () => {
  env = await createDevServerEnv();
  worker = await createBashWorker({
    connection: env.nativeConnection,
    taskQueue,
    executor: { spillDir, workdirRoots: TEST_WORKDIR_ROOTS },
    maxConcurrentCommands: 2,
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  running = worker.run();
  tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await endLeftCommands(spillDir);
  await env?.teardown();
});

it('reads, writes to stdin and kills while every command slot is taken', async () => {
  const ids: string[] = [];
  for (const n of [1, 2]) {
    ids.push(
      await startBackground(
        tools.bash,
        `echo task${n}; cat`,
        {},
        {
          description: `Fills slot ${n}`,
          keep_stdin_open: true,
        },
      ),
    );
  }
  for (const [i, taskId] of ids.entries()) {
    const { value, ms } = await timed(() =>
      (tools.bash_output as Tool).execute({ task_id: taskId, wait_ms: 5_000 }),
    );
    expect(text(value)).toBe(`task${i + 1}\n[status: running]`);
    expect(ms).toBeLessThan(5_000);
  }
  // Both command slots are taken: the command worker has no room for another activity.
  expect(worker.getStatus().queue.numInFlightActivities + worker.getStatus().host.numInFlightActivities).toBe(
    2,
  );
  const [first, second] = ids as [string, string];
  expect(text(await (tools.bash_input as Tool).execute({ task_id: first, text: 'typed\n' }))).toBe(
    `wrote 6 bytes to the stdin of task ${first}`,
  );
  expect(text(await (tools.bash_output as Tool).execute({ task_id: first, wait_ms: 5_000 }))).toBe(
    'typed\n[status: running]',
  );
  for (const taskId of [first, second]) {
    const { value, ms } = await timed(() => (tools.bash_kill as Tool).execute({ task_id: taskId }));
    expect(text(value)).toBe(`killed background task ${taskId}`);
    expect(ms).toBeLessThan(5_000);
  }
});
