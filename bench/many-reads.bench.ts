/**
 * A task read thousands of times (more than Temporal's 2,000 updates a run) stays readable and
 * exact: the reader workflow continues as new before any per-run limit.
 */
import { describe, expect, it } from 'vitest';
import { BashTasks } from '../src/client/bash-tasks.js';
import { READER_CLAIMS_PER_RUN } from '../src/shared/limits.js';
import { outputReaderId } from '../src/shared/read-position.js';
import { useDevServerWithWorker } from '../test/helpers/bash-worker.js';

const READS = 2_500;

const suite = useDevServerWithWorker();

describe('a task read thousands of times', () => {
  it(`stays exact over ${READS} reads, its reader continuing as new`, async () => {
    const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
    // Prints until killed, so every read below finds the task running.
    const taskId = await tasks.start({
      command: 'i=0; while true; do i=$((i+1)); echo $i; sleep 0.01; done',
      description: 'Count',
      background: true,
    });
    let stdout = '';
    for (let i = 0; i < READS; i++) {
      const read = await tasks.read(taskId, undefined);
      expect(read.unclaimed).toBe(false);
      expect(read.stdout.droppedBytes).toBe(0);
      stdout += read.stdout.text;
    }
    await tasks.kill(taskId, undefined);
    for (;;) {
      const read = await tasks.read(taskId, undefined);
      stdout += read.stdout.text;
      if (read.stdout.text === '') break;
    }
    const numbers = stdout.trimEnd().split('\n').map(Number);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));

    const runs: { historyLength: number }[] = [];
    for await (const execution of suite.env.client.workflow.list({
      query: `WorkflowId = '${outputReaderId(taskId)}'`,
    })) {
      runs.push({ historyLength: execution.historyLength });
    }
    expect(runs.length).toBeGreaterThanOrEqual(Math.floor(READS / READER_CLAIMS_PER_RUN));
    expect(Math.max(...runs.map((run) => run.historyLength))).toBeLessThan(4_096);
    console.info(
      `${READS} reads: ${numbers.length} lines exact; reader runs ${runs.length}, longest history ${Math.max(...runs.map((run) => run.historyLength))} events`,
    );
  });
});
