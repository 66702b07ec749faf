/**
 * A terminal outlives its worker: a full-screen program (vim) on a terminal task, driven with keys
 * through the tools, across a SIGKILL of its worker (a real CLI process) and a new one on the same
 * host, which reads the same screen from the same log.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
let worker: WorkerProcess | undefined;
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-terminal-'));
const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-terminal-work-'));
const hostId = `host-${randomUUID().slice(0, 8)}`;
const taskQueue = `terminal-${randomUUID()}`;
let tools: Tools;

beforeAll(async () => {
  env = await createDevServerEnv();
  tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
});

afterAll(async () => {
  await worker?.crash();
  await endLeftCommands(spillDir);
  await env?.teardown();
});

const startWorker = async () => {
  worker = await startWorkerProcess(env, taskQueue, [
    '--host-id',
    hostId,
    '--spill-dir',
    spillDir,
    '--workdir',
    workdir,
  ]);
};
const call = async (name: keyof Tools, args: Record<string, unknown>) =>
  text(await tools[name].execute(args, {}));

/** Reads the screen (each read waits for a change) until it matches `until`; returns that read. */
async function screenUntil(taskId: string, until: RegExp): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = await call('bash_output', { task_id: taskId, wait_ms: 2_000 });
    if (until.test(read)) return read;
    if (Date.now() > deadline) throw new Error(`never matched ${until}; last read ${JSON.stringify(read)}`);
  }
}

describe('a terminal task across a worker restart', () => {
  it('keeps vim on its terminal: the same screen from the new worker, keys after it, exact exit status', async () => {
    await startWorker();
    const taskId = await startBackground(
      tools.bash,
      'vim -u NONE -N -i NONE -n notes.txt',
      {},
      {
        description: 'Edits notes in vim',
        tty: true,
        cols: 50,
        rows: 8,
      },
    );
    // vim draws its empty buffer: ~ on each row but the first, the file's name on the last.
    const empty = await screenUntil(taskId, /"notes\.txt"/);
    expect(empty.split('\n').slice(1, 7)).toEqual(['~', '~', '~', '~', '~', '~']);

    expect(await call('bash_input', { task_id: taskId, text: 'ihello terminal', keys: ['Enter'] })).toMatch(
      /^wrote \d+ bytes to the stdin of task /,
    );
    await call('bash_input', { task_id: taskId, text: 'second line', keys: ['Escape', 'Up', 'Home'] });
    const edited = await screenUntil(taskId, /cursor at row 1, column 1\]/);
    expect(edited.split('\n').slice(0, 3)).toEqual(['hello terminal', 'second line', '~']);

    await worker?.crash();
    await startWorker();
    // The new worker renders the same log: the same screen, to the cursor.
    expect(await call('bash_output', { task_id: taskId })).toBe(edited);

    await call('bash_input', { task_id: taskId, text: ':wq', keys: ['Enter'] });
    const end = await screenUntil(taskId, /\[status: (completed|killed|failed|lost)/);
    expect(end.split('\n').at(-1)).toBe('[status: completed, exit code: 0]');
    expect(readFileSync(path.join(workdir, 'notes.txt'), 'utf8')).toBe('hello terminal\nsecond line\n');
  });
});
