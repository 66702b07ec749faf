/**
 * What a running task costs the Temporal server, counted from the dev server's own metrics: an idle
 * task and a chatty one make no heartbeat and no execution write between the heartbeat at attach and
 * the next a minute later, while reads still get fresh output from the host.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pickFreePort } from '../../src/dev-server/ports.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';

let env: TestWorkflowEnvironment;
let worker: RunningWorker;
let tools: Tools;
let metricsUrl: string;

beforeAll(async () => {
  const metricsPort = await pickFreePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  env = await createDevServerEnv({}, { metricsPort });
  worker = await startBashWorker(env);
  tools = toolsByName(createBashTools({ client: env.client, taskQueue: worker.taskQueue }));
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The sum of a counter's series whose labels include all of `labels`. */
async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const body = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const [series, value] = line.split('} ');
    if (Object.entries(labels).every(([key, want]) => series?.includes(`${key}="${want}"`)))
      sum += Number(value);
  }
  return sum;
}

const heartbeats = () =>
  counter('service_requests', { operation: 'RecordActivityTaskHeartbeat', service_name: 'frontend' });
const executionWrites = () => counter('persistence_requests', { operation: 'UpdateWorkflowExecution' });

it('an idle and a chatty task make no heartbeat and no write for a minute after attach; reads come from the host', async () => {
  const idle = await Promise.all([1, 2, 3].map(() => startBackground(tools.bash, 'sleep 300')));
  const chatty = await startBackground(tools.bash, 'while true; do echo tick; sleep 0.1; done');
  const all = [...idle, chatty];
  // Each attached (its first heartbeat recorded that the command started).
  for (const taskId of all) {
    await expect
      .poll(
        async () =>
          (await env.client.workflow.getHandle(taskId).describe()).raw.pendingActivities?.[0]
            ?.heartbeatDetails?.payloads?.length ?? 0,
        { timeout: 10_000 },
      )
      .toBe(1);
  }
  await sleep(1_000);
  const before = { heartbeats: await heartbeats(), writes: await executionWrites() };
  await sleep(20_000);
  const after = { heartbeats: await heartbeats(), writes: await executionWrites() };
  expect(after.heartbeats - before.heartbeats).toBe(0);
  expect(after.writes - before.writes).toBe(0);

  // The chatty task's output is fresh all the same: a read gets ticks printed within the last moments.
  const read = text(await (tools.bash_output as Tool).execute({ task_id: chatty }, {}));
  expect(read).toMatch(/^(tick\n){150,}\[status: running\]$/);
  const next = text(await (tools.bash_output as Tool).execute({ task_id: chatty, wait_ms: 5_000 }, {}));
  expect(next).toMatch(/^(tick\n)+\[status: running\]$/);
  for (const taskId of all) {
    expect(text(await (tools.bash_kill as Tool).execute({ task_id: taskId }, {}))).toBe(
      `killed background task ${taskId}`,
    );
  }
}, 90_000);
