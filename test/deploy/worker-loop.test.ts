/**
 * The container's worker loop (deploy/worker-loop.sh, the Dockerfile's entry point under tini):
 * a crashed worker is started again and re-attaches to the commands the old one ran.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { statusLine } from '../../src/shared/status-line.js';
import { printedBytes } from '../helpers/printed.js';
import { waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';

let env: TestWorkflowEnvironment;
let loop: ChildProcess | undefined;

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  if (loop && loop.exitCode === null && loop.signalCode === null) loop.kill('SIGKILL');
  await env?.teardown();
});

/** The worker the loop runs now: its child `node ... worker` process. */
function workerPid(loopPid: number): number | undefined {
  const out = execFileSync('ps', ['--ppid', String(loopPid), '-o', 'pid=,args='], { encoding: 'utf8' });
  const line = out.split('\n').find((entry) => entry.includes('main.js worker'));
  return line ? Number(line.trim().split(/\s+/)[0]) : undefined;
}

describe('deploy/worker-loop.sh', () => {
  it("restarts a crashed worker, which re-attaches to the old one's command; SIGTERM stops it", async () => {
    const taskQueue = `loop-${Date.now()}`;
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-loop-'));
    loop = spawn(
      'sh',
      [
        'deploy/worker-loop.sh',
        '--address',
        env.address,
        '--task-queue',
        taskQueue,
        '--host-id',
        'loop-host',
        '--spill-dir',
        spillDir,
        // The task runs in the checkout, as a project under dev's root does.
        ...TEST_WORKDIR_ROOTS.flatMap((root) => ['--workdir-root', root]),
      ],
      {
        env: { ...process.env, DURABLE_BASH_CLI: path.resolve('dist/cli/main.js') },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    loop.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await waitFor(() => stderr.includes('worker polling'), 60_000);
    const tasks = new BashTasks({ client: env.client, taskQueue });
    const taskId = await tasks.start({
      command: 'for i in 1 2 3 4 5 6; do echo "tick $i"; sleep 0.5; done; exit 3',
      description: 'Outlives its worker',
      background: true,
    });
    await expect.poll(() => printedBytes(tasks, taskId), { timeout: 15_000 }).toBeGreaterThan(0);

    const first = workerPid(loop.pid ?? 0);
    process.kill(first ?? 0, 'SIGKILL');
    await waitFor(() => stderr.includes('starting it again'), 10_000);
    await waitFor(() => (stderr.match(/worker polling/g) ?? []).length === 2, 60_000);

    let status = '';
    let output = '';
    while (status === '' || status === '[status: running]') {
      const read = await tasks.read(taskId, undefined);
      output += read.stdout.text;
      status = statusLine(read.state);
      await sleep(200);
    }
    expect({ output, status }).toEqual({
      output: [1, 2, 3, 4, 5, 6].map((i) => `tick ${i}\n`).join(''),
      status: '[status: completed, exit code: 3]',
    });

    const second = workerPid(loop.pid ?? 0);
    loop.kill('SIGTERM');
    const [code] = await once(loop, 'exit');
    expect(code).toBe(0);
    expect(() => process.kill(second ?? 0, 0)).toThrow();
  });
});
