import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { completionNotice } from '../../src/workflows/index.js';
import { createTimeSkippingEnv } from '../helpers/temporal-env.js';
import { startBashWorker, type RunningWorker } from '../helpers/bash-worker.js';

const HOUR_MS = 3_600_000;
let env: TestWorkflowEnvironment;
let worker: RunningWorker | undefined;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
  if (process.env.WITH_BASH) worker = await startBashWorker(env);
});
afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

async function probe(label: string) {
  const a = await env.currentTimeMs();
  await new Promise((r) => setTimeout(r, 300));
  const b = await env.currentTimeMs();
  console.log(label, 'server advanced', b - a, 'ms in 300ms wall');
}

async function sleepGuarded(ms: number, guardMs = 5000) {
  const t0 = performance.now();
  const s0 = await env.currentTimeMs();
  const r = await Promise.race([env.sleep(ms).then(() => 'slept'), new Promise((r) => setTimeout(() => r('guard'), guardMs))]);
  const s1 = await env.currentTimeMs();
  console.log(`sleep(${ms}) -> ${r} after ${(performance.now() - t0).toFixed(0)}ms wall; server +${s1 - s0}`);
  return r;
}

it('notice: sleep with nothing', async () => {
  await probe('idle');
  await sleepGuarded(HOUR_MS);
}, 30_000);

it('notice: start notice then sleep', async () => {
  const taskQueue = `skip-${randomUUID()}`;
  const w = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: {},
  });
  await w.runUntil(async () => {
    const handle = await env.client.workflow.start(completionNotice, {
      workflowId: `notice-${randomUUID()}`,
      taskQueue,
      args: [{ sessionId: 's', taskQueue: `no-agent-${randomUUID()}`, windowMs: HOUR_MS, content: 'done' }],
    });
    await new Promise((r) => setTimeout(r, 500));
    await probe('after start');
    await sleepGuarded(HOUR_MS + 60_000);
    const t0 = performance.now();
    const res = await Promise.race([handle.result(), new Promise((r) => setTimeout(() => r('guard'), 10000))]);
    console.log('result', res, performance.now() - t0);
  });
}, 60_000);
