import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import type { OutputRead } from '../../src/client/output-reader-client.js';
import { DEFAULT_OUTPUT_LIMIT_BYTES } from '../../src/shared/limits.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { text } from '../helpers/tool-calls.js';

const OUTPUT_BYTES = 200 * 1024 * 1024;
/** History a task keeps however much it prints (Temporal suggests continue-as-new at 4 MB). */
const HISTORY_LIMIT_BYTES = 5 * 1024 * 1024;
/** What the command worker may grow by while the task runs: it holds tails, never the stream. */
const WORKER_GROWTH_LIMIT_BYTES = 100 * 1024 * 1024;
/** The command's output: lines of a repeating pattern, cheap to make and to check. */
const COMMAND = `yes 'durable-bash 200 MB line' | head -c ${OUTPUT_BYTES}; sleep 0.5`;

const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-large-'));
// The worker runs in this process, so this process's RSS is the worker's.
const suite = useDevServerWithWorker({ executor: { spillDir: path.join(spillDir, 'spill') } });

afterAll(async () => {
  rmSync(spillDir, { recursive: true, force: true });
});

function sha256OfFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

describe('a task that prints 200 MB', () => {
  it('keeps history small, the spill file byte-exact, worker memory flat, and says what reads dropped', async () => {
    const tools = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const bashOutput = tools.find((tool) => tool.name === 'bash_output') as Tool;
    const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });

    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 50);

    const taskId = await startBackground(bash, COMMAND, {}, { description: 'Print 200 MB' });
    const reads: OutputRead[] = [];
    for (;;) {
      const read = await tasks.read(taskId, undefined);
      reads.push(read);
      if (read.state.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    clearInterval(sampler);

    const handle = suite.env.client.workflow.getHandle(taskId);
    const result = await handle.result();
    const spillPath = result.stdout.spillPath ?? '';
    expect(result.stdout.bytes).toBe(OUTPUT_BYTES);
    const expected = execFileSync(
      'bash',
      ['-c', `yes 'durable-bash 200 MB line' | head -c ${OUTPUT_BYTES} | sha256sum`],
      {
        encoding: 'utf8',
      },
    ).split(' ')[0];
    expect(await sha256OfFile(spillPath)).toBe(expected);

    const info = (await handle.describe()).raw.workflowExecutionInfo;
    const historyBytes = Number(info?.historySizeBytes);
    const historyEvents = Number(info?.historyLength);
    expect(historyBytes).toBeLessThan(HISTORY_LIMIT_BYTES);
    expect(rssPeak - rssBefore).toBeLessThan(WORKER_GROWTH_LIMIT_BYTES);

    // Every read that fell behind said so; together the reads dropped all but what they showed.
    const shown = reads.reduce((sum, read) => sum + Buffer.byteLength(read.stdout.text), 0);
    const dropped = reads.reduce((sum, read) => sum + read.stdout.droppedBytes, 0);
    expect(shown + dropped).toBe(OUTPUT_BYTES);
    expect(reads.some((read) => read.stdout.droppedBytes > 0)).toBe(true);
    expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );
    expect(Buffer.byteLength(reads.at(-1)?.stdout.text ?? '')).toBeLessThanOrEqual(
      DEFAULT_OUTPUT_LIMIT_BYTES,
    );

    console.info(
      `200 MB task: history ${historyBytes} bytes in ${historyEvents} events; worker RSS +${Math.round((rssPeak - rssBefore) / 1024 / 1024)} MB; ${reads.length} reads`,
    );
  });
});
