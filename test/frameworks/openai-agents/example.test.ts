/**
 * examples/openai-agents-sandbox.mjs run as a user runs it (Node.js 24, as this test runs), against
 * a dev server and a `durable-bash worker`, with the SDK's ScriptedModel standing in for a real one.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { useDevServer } from '../../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';

const server = useDevServer();
const run = promisify(execFile);
const taskQueue = `test-openai-agents-example-${process.pid}`;
let worker: WorkerProcess | undefined;

afterAll(async () => {
  await worker?.crash();
});

describe('examples/openai-agents-sandbox.mjs', () => {
  it("prints the command the agent ran on durable-bash, what it printed, and the agent's answer", async () => {
    worker = await startWorkerProcess(server.env, taskQueue);
    const { stdout } = await run(process.execPath, ['examples/openai-agents-sandbox.mjs'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: server.env.address,
        DURABLE_BASH_TASK_QUEUE: taskQueue,
        DURABLE_BASH_EXAMPLE_MODEL: 'scripted',
      },
      timeout: 60_000,
    });
    expect(stdout).toBe(
      [
        '$ echo durable; seq 3',
        'Process exited with code 0',
        'Output:',
        'durable',
        '1',
        '2',
        '3',
        '',
        'agent: It printed "durable" and counted to 3.',
        '',
      ].join('\n'),
    );
  }, 120_000);
});
