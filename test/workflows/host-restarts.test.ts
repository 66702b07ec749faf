/**
 * The restart loop of `on_host_loss: "restart"` (src/workflows/bash-task.ts), its own logic the
 * subject: scripted activities stand in for the hosts. `chooseHost` hands out a fresh host each
 * time (and records what it was asked to avoid); no worker ever serves a command host's queue but
 * the one a case names, so each host is lost after the lost window. The real hosts are in
 * test/durability/host-loss.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { MAX_HOST_RESTARTS } from '../../src/shared/limits.js';
import { statusSearchAttribute } from '../../src/shared/search-attributes.js';
import { statusLine } from '../../src/shared/status-line.js';
import type { BashTaskInput, CommandHost, CommandSpec, StopResult, TaskId } from '../../src/shared/task.js';
import { controlTaskQueue, hostTaskQueue } from '../../src/shared/task-queues.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';

/** Short, so four losses take seconds. */
const LOST_AFTER_MS = 1_500;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createDevServerEnv();
});
afterAll(async () => {
  await env?.teardown();
});

/** A worker of the task's workflow and command queue whose hosts are scripted. */
async function scriptedQueue(taskQueue: string) {
  const avoided: string[][] = [];
  let next = 0;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: {
      resolveCommand: async (input: BashTaskInput): Promise<CommandSpec> => ({
        taskId: input.taskId,
        command: input.command,
        workdir: '/',
        background: input.background,
        taskQueue,
        lostAfterMs: LOST_AFTER_MS,
        heartbeatTimeoutMs: 60_000,
      }),
      chooseHost: async (avoid?: string[]): Promise<CommandHost> => {
        avoided.push(avoid ?? []);
        const hostId = `h${next++}`;
        return { hostId, hostQueue: hostTaskQueue(taskQueue, hostId) };
      },
    },
  });
  const running = worker.run();
  const tasks = new BashTasks({ client: env.client, taskQueue });
  return {
    avoided,
    tasks,
    /** A background task that restarts on host loss. */
    start: (description: string) =>
      tasks.start({ command: 'true', description, background: true, restartOnHostLoss: true }),
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

async function status(taskId: TaskId): Promise<string | undefined> {
  return (await env.client.workflow.getHandle(taskId).describe()).typedSearchAttributes.get(
    statusSearchAttribute,
  );
}

describe('the restart loop of on_host_loss "restart"', () => {
  it(`restarts at most ${MAX_HOST_RESTARTS} times, never back on a host it lost, then ends lost with its restarts`, async () => {
    const taskQueue = `restarts-${randomUUID()}`;
    const queue = await scriptedQueue(taskQueue);
    try {
      const { tasks } = queue;
      const taskId = await queue.start('Lost everywhere');
      await expect(tasks.result(taskId)).rejects.toThrow();
      expect(statusLine((await tasks.snapshot(taskId, undefined)).state)).toBe(
        `[status: lost: no worker on its host h${MAX_HOST_RESTARTS} came back within ${LOST_AFTER_MS}ms; the exit status is unknown (restarted ${MAX_HOST_RESTARTS} times after its host was lost)]`,
      );
      expect(await status(taskId)).toBe('lost');
      // The first choice avoids nothing; each restart's avoids the hosts lost before the current one.
      const hostQueue = (id: number) => hostTaskQueue(taskQueue, `h${id}`);
      expect(queue.avoided).toEqual([[], [], [hostQueue(0)], [hostQueue(0), hostQueue(1)]]);
      const memo = (await env.client.workflow.getHandle(taskId).describe()).memo;
      expect(memo).toMatchObject({ restarts: MAX_HOST_RESTARTS, hostQueue: hostQueue(MAX_HOST_RESTARTS) });
    } finally {
      await queue.stop();
    }
  }, 60_000);

  it('ends lost, not "killed before the command started", when a kill comes before the restart starts', async () => {
    const taskQueue = `restart-killed-${randomUUID()}`;
    const queue = await scriptedQueue(taskQueue);
    // Host h1, where the restart goes: its attempt waits, never starting the command, until the kill.
    const h1 = hostTaskQueue(taskQueue, 'h1');
    const attempts: string[] = [];
    const hostWorkers = await Promise.all([
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue: h1,
        activities: {
          runCommand: async (spec: CommandSpec) => {
            attempts.push(spec.restart === undefined ? 'first' : `restart ${spec.restart.count}`);
            // A cancellation reaches an attempt in a heartbeat's response, as on a real host.
            const beat = setInterval(() => Context.current().heartbeat(), 200);
            await Context.current().cancelled.finally(() => clearInterval(beat));
          },
        },
      }),
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue: controlTaskQueue(h1),
        activities: { stopCommand: async (): Promise<StopResult> => ({ kind: 'never-started' }) },
      }),
    ]);
    const running = hostWorkers.map((worker) => worker.run());
    try {
      const { tasks } = queue;
      const taskId = await queue.start('Killed on its way');
      const until = Date.now() + 30_000;
      while (attempts.length === 0) {
        expect(Date.now()).toBeLessThan(until);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(attempts).toEqual(['restart 1']);
      await env.client.workflow.getHandle(taskId).cancel();
      await expect(tasks.result(taskId)).rejects.toThrow();
      expect(statusLine((await tasks.snapshot(taskId, undefined)).state)).toBe(
        '[status: lost: its host h0 was lost, and it was killed before it started again on h1 (restarted once after its host was lost)]',
      );
      expect(await status(taskId)).toBe('lost');
    } finally {
      for (const worker of hostWorkers) worker.shutdown();
      await Promise.all(running);
      await queue.stop();
    }
  }, 60_000);
});
