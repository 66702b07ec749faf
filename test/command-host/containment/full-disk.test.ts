// A spill file that cannot take more (a full disk, a file size limit): the command's output stops
// there, the result says which stream and why, and the worker and its next command carry on. The
// worker runs as a real process under RLIMIT_FSIZE, which every supervisor it starts inherits: the
// spill files then refuse writes past the limit, as a full disk does.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../../src/shared/tool-types.js';
import { createBashTools } from '../../../src/tools/create-bash-tools.js';
import { createDevServerEnv } from '../../helpers/temporal-env.js';
import { text } from '../../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';

const LIMIT_KIB = 64;

let env: TestWorkflowEnvironment;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  await worker?.crash();
  await env?.teardown();
});

describe('a spill file that refuses writes', () => {
  it('stops the stream there, says which and why, and the worker runs the next command', async () => {
    const taskQueue = `full-disk-${randomUUID()}`;
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-full-disk-'));
    // Without isolation: a private copy of the supervisor for sessions would not fit under the limit.
    worker = await startWorkerProcess(env, taskQueue, ['--spill-dir', spillDir, '--isolation', 'none'], {
      fileSizeLimitKiB: LIMIT_KIB,
    });
    const [bash] = createBashTools({ client: env.client, taskQueue }) as [Tool];

    const result = text(
      await bash.execute({
        command: "head -c 200000 /dev/zero | tr '\\0' x; echo done >&2",
        description: 'Fill the disk',
      }),
    );
    expect(result).toMatch(
      /\n\[output truncated; full output: \S+\.stdout\]\n\[stderr\]\ndone\n\[stdout could not be saved: its spill file refused a write \(File too large\); later writes to it failed\]$/,
    );
    const spillFile = /\[output truncated; full output: (\S+)\]/.exec(result)?.[1] ?? '';
    expect(statSync(spillFile).size).toBe(LIMIT_KIB * 1024);

    expect(text(await bash.execute({ command: 'echo fine', description: 'After' }))).toBe('fine\n');
  });
});
