/**
 * examples/ai-sdk-sandbox.mjs run as a user runs it (Node.js 24, the built package, ai/test's mock
 * model), against a dev server and a command worker: the tool streams the spawned command's lines,
 * and the model reads its output and exit code.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useDevServerWithWorker } from '../../helpers/bash-worker.js';

const suite = useDevServerWithWorker();
const run = promisify(execFile);

describe('examples/ai-sdk-sandbox.mjs', () => {
  it("gives generateText the sandbox; its tool streams a spawned command's lines and returns its exit", async () => {
    const { stdout } = await run(process.execPath, ['examples/ai-sdk-sandbox.mjs'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: suite.env.address,
        DURABLE_BASH_TASK_QUEUE: suite.worker.taskQueue,
        DURABLE_BASH_EXAMPLE_MODEL: 'mock',
      },
      timeout: 60_000,
    });
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^sandbox: session sandbox-[0-9a-f-]+, workspace \/\S+$/);
    expect(lines.slice(1)).toEqual([
      'streamed> tick 1',
      'streamed> tick 2',
      'streamed> tick 3',
      'tool result: {"stdout":"tick 1\\ntick 2\\ntick 3\\n","stderr":"done\\n","exitCode":0}',
      'answer: it printed 3 lines and exited with 0',
      '',
    ]);
  });
});
