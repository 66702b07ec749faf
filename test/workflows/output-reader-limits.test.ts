import { describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { outputReaderId } from '../../src/shared/read-position.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';

// A server that suggests continue-as-new after 40 history events (the default is 4,096), so the
// reader's own limit of claims a run (400) is never what renews it here.
const suite = useDevServerWithWorker({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 } });

describe('the output reader under Temporal’s history limits', () => {
  it('continues as new when the server suggests it, and reads stay exact', async () => {
    const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
    const taskId = await tasks.start({
      command: 'for i in $(seq 1 30); do echo $i; sleep 0.05; done',
      description: 'Count',
      background: true,
    });
    let stdout = '';
    for (let i = 0; i < 25; i++) {
      stdout += (await tasks.read(taskId, undefined)).stdout.text;
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    await suite.env.client.workflow.getHandle(taskId).result();
    for (;;) {
      const read = await tasks.read(taskId, undefined);
      stdout += read.stdout.text;
      if (read.stdout.text === '') break;
    }
    expect(stdout).toBe(Array.from({ length: 30 }, (_, i) => `${i + 1}\n`).join(''));
    const runs: number[] = [];
    for await (const execution of suite.env.client.workflow.list({
      query: `WorkflowId = '${outputReaderId(taskId)}'`,
    })) {
      runs.push(execution.historyLength);
    }
    expect(runs.length).toBeGreaterThan(2);
    expect(Math.max(...runs)).toBeLessThan(80);
  });
});
