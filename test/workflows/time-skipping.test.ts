import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { tailText } from '../../src/client/stream-text.js';
import { statusSearchAttribute } from '../../src/shared/search-attributes.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createTimeSkippingEnv } from '../helpers/temporal-env.js';

// The time-skipping server holds its clock while any activity is scheduled or running
// (docs/TEMPORAL-NOTES.md), so a timeout racing the command activity cannot be skipped; these
// tests prove the provisioned server runs durable-bash's workflow and search attributes.
let env: TestWorkflowEnvironment;
let worker: RunningWorker;

beforeAll(async () => {
  env = await createTimeSkippingEnv();
  worker = await startBashWorker(env);
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

describe('bashTask on the time-skipping server', () => {
  it('runs a command to its result and records the end status', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({ command: 'echo skipped', description: 'Echo', background: false });
    const result = await tasks.result(taskId);
    expect(tailText(result.stdout)).toBe('skipped\n');
    const description = await env.client.workflow.getHandle(taskId).describe();
    expect(description.typedSearchAttributes.get(statusSearchAttribute)).toBe('completed');
  });
});
