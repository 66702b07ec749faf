import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { TASK_FILES_FORMAT } from '../../src/command-host/supervisor/supervisor-records.js';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { RunFailedError } from '../../src/shared/errors.js';
import { statusSearchAttribute } from '../../src/shared/search-attributes.js';
import { KILLED_BEFORE_START, statusLine } from '../../src/shared/status-line.js';
import {
  type BashTaskInput,
  type CommandSpec,
  RunFailureType,
  type StopResult,
  type TaskId,
} from '../../src/shared/task.js';
import { controlTaskQueue } from '../../src/shared/task-queues.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';

let env: TestWorkflowEnvironment;
let worker: RunningWorker;
let hostDown: RunningWorker;

beforeAll(async () => {
  env = await createDevServerEnv();
  worker = await startBashWorker(env);
  // Routes its commands to a task queue no worker serves: a command host that is down.
  hostDown = await startBashWorker(env, { commandTaskQueue: `down-${Date.now()}` });
});

afterAll(async () => {
  await Promise.all([worker?.stop(), hostDown?.stop()]);
  await env?.teardown();
});

async function status(taskId: TaskId): Promise<string | undefined> {
  const description = await env.client.workflow.getHandle(taskId).describe();
  return description.typedSearchAttributes.get(statusSearchAttribute);
}

describe('bashTask status', () => {
  it('is running while the command runs, then completed', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({ command: 'sleep 1', description: 'Sleep', background: false });
    expect(await status(taskId)).toBe('running');
    await tasks.result(taskId);
    expect(await status(taskId)).toBe('completed');
  });

  it('is killed for a signal death', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({ command: 'kill -TERM $$', description: 'Die', background: false });
    expect((await tasks.result(taskId)).signal).toBe('SIGTERM');
    expect(await status(taskId)).toBe('killed');
  });

  it('is failed when the command cannot start', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const taskId = await tasks.start({
      command: 'true',
      description: 'Nothing',
      background: false,
      workdir: '/nope',
    });
    await expect(tasks.result(taskId)).rejects.toThrow(RunFailedError);
    expect(await status(taskId)).toBe('failed');
  });
});

describe('bashTask killed while its command is resolved', () => {
  it('is killed, not left running, when the kill comes during resolveCommand', async () => {
    // The workflow's own logic is the subject: a worker whose resolveCommand (the first local
    // activity) waits until it is cancelled, so the kill lands there.
    const taskQueue = `resolving-${randomUUID()}`;
    const resolving = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities: {
        resolveCommand: () =>
          Promise.race([Context.current().cancelled, new Promise((resolve) => setTimeout(resolve, 30_000))]),
      },
    });
    const running = resolving.run();
    try {
      const tasks = new BashTasks({ client: env.client, taskQueue });
      const taskId = await tasks.start({ command: 'true', description: 'Never resolved', background: true });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await env.client.workflow.getHandle(taskId).cancel();
      const description = await env.client.workflow
        .getHandle(taskId)
        .result()
        .catch(() => undefined);
      expect(description).toBeUndefined();
      expect((await env.client.workflow.getHandle(taskId).describe()).status.name).toBe('CANCELLED');
      expect(await status(taskId)).toBe('killed');
      expect(statusLine((await tasks.snapshot(taskId, undefined)).state)).toBe(
        '[status: killed before the command started]',
      );
    } finally {
      resolving.shutdown();
      await running;
    }
  });
});

describe('bashTask killed after its host claimed it, before the command started', () => {
  it('is killed, as a kill before any worker took it is, never failed or lost: the kill left a tombstone', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const start = tasks.prepareStart({ command: 'echo ran', description: 'Tombstoned', background: true });
    const taskId = start.input.taskId;
    // What a kill that found no supervisor leaves on the host (command-stop.ts): the claim, taken.
    writeFileSync(taskFiles(worker.spillDir ?? '', taskId).state, '{"v":1,"tombstone":true}\n');
    await env.client.workflow.start('bashTask', {
      taskQueue: worker.taskQueue,
      workflowId: taskId,
      args: [start.input],
      typedSearchAttributes: start.typedSearchAttributes,
      memo: start.memo,
    });
    const failure = await tasks.result(taskId).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(RunFailedError);
    expect({ status: (failure as RunFailedError).status, message: (failure as Error).message }).toEqual({
      status: 'killed',
      message: 'killed before the command started',
    });
    expect(await status(taskId)).toBe('killed');
    expect(statusLine((await tasks.snapshot(taskId, undefined)).state)).toBe(
      '[status: killed before the command started]',
    );
    // Nothing ran: no output file was ever made.
    expect(existsSync(taskFiles(worker.spillDir ?? '', taskId).stdout)).toBe(false);
  });
});

describe('bashTask killed while its command activity has not started the command yet', () => {
  // The workflow's own logic is the subject: a host whose command activity heartbeats without ever
  // starting the command until the kill reaches it, then ends as a real host's attempt would (its
  // cancellation, or the tombstone the kill's stop left), and whose stop finds nothing started.
  it.each([
    { attempt: 'is cancelled', closes: 'CANCELLED' },
    { attempt: 'meets the tombstone', closes: 'FAILED' },
  ])(
    'reads killed before the command started, never failed, when its attempt $attempt',
    async ({ attempt, closes }) => {
      const taskQueue = `held-${randomUUID()}`;
      const hostQueue = `held-host-${randomUUID()}`;
      let attempts = 0;
      const runCommand = async () => {
        attempts++;
        const context = Context.current();
        const beat = setInterval(() => context.heartbeat(), 100);
        try {
          await context.cancelled;
        } catch (err) {
          if (attempt === 'is cancelled') throw err;
          throw ApplicationFailure.create({
            type: RunFailureType.killedBeforeStart,
            message: KILLED_BEFORE_START,
            nonRetryable: true,
          });
        } finally {
          clearInterval(beat);
        }
      };
      const workers = await Promise.all([
        Worker.create({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue,
          workflowBundle: { codePath: inject('workflowBundlePath') },
          activities: {
            resolveCommand: (input: BashTaskInput): CommandSpec => ({
              taskId: input.taskId,
              command: input.command,
              workdir: '/',
              background: input.background,
              taskQueue,
              lostAfterMs: 60_000,
              heartbeatTimeoutMs: 2_000,
              hostQueue,
              hostId: 'held-host',
            }),
          },
        }),
        Worker.create({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue: hostQueue,
          activities: { runCommand },
        }),
        Worker.create({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue: controlTaskQueue(hostQueue),
          activities: { stopCommand: async (): Promise<StopResult> => ({ kind: 'never-started' }) },
        }),
      ]);
      const running = workers.map((each) => each.run());
      try {
        const tasks = new BashTasks({ client: env.client, taskQueue });
        const bashOutput = toolsByName(createBashTools({ client: env.client, taskQueue })).bash_output;
        const taskId = await tasks.start({ command: 'sleep 60', description: 'Held', background: true });
        await expect.poll(() => attempts).toBe(1);
        expect(await tasks.kill(taskId, undefined)).toBe('killed');
        expect((await env.client.workflow.getHandle(taskId).describe()).status.name).toBe(closes);
        expect(await status(taskId)).toBe('killed');
        expect(text(await bashOutput.execute({ task_id: taskId }))).toBe(
          '(no new output)\n[status: killed before the command started]',
        );
        // The same run as 0.2.0 recorded it, its status `failed`, replays: an upsert's value is not
        // compared on replay, only that an upsert comes there.
        const history = await env.client.workflow.getHandle(taskId).fetchHistory();
        const recorded = (history.events ?? []).flatMap(
          (event) =>
            event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[
              statusSearchAttribute.name
            ] ?? [],
        );
        expect(recorded.map((payload) => new TextDecoder().decode(payload.data ?? undefined))).toEqual([
          '"killed"',
        ]);
        for (const payload of recorded) payload.data = new TextEncoder().encode('"failed"');
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: inject('workflowBundlePath') } },
          history,
          taskId,
        );
      } finally {
        for (const each of workers) each.shutdown();
        await Promise.all(running);
      }
    },
  );
});

describe('bashTask killed right after its start', () => {
  it('reads killed by SIGTERM, or killed before the command started, never failed', async () => {
    const tools = toolsByName(createBashTools({ client: env.client, taskQueue: worker.taskQueue }));
    const exec = agent(`kill-at-once-${randomUUID()}`);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const taskId = await startBackground(tools.bash, 'sleep 60', exec);
        expect(text(await tools.bash_kill.execute({ task_id: taskId }, exec))).toBe(
          `killed background task ${taskId}`,
        );
        const read = text(await tools.bash_output.execute({ task_id: taskId }, exec));
        return { line: read.split('\n').at(-1), attribute: await status(taskId as TaskId) };
      }),
    );
    for (const each of statuses) {
      expect([
        { line: '[status: killed by SIGTERM]', attribute: 'killed' },
        { line: '[status: killed before the command started]', attribute: 'killed' },
      ]).toContainEqual(each);
    }
  });
});

describe('bashTask on a host whose files for it are in a newer format than its worker knows', () => {
  it('leaves them untouched, says so in one line, and waits (retried) for a worker that knows them', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const start = tasks.prepareStart({
      command: 'echo ran',
      description: 'From a newer release',
      background: true,
    });
    const taskId = start.input.taskId;
    const files = taskFiles(worker.spillDir ?? '', taskId);
    const record = `${JSON.stringify({ v: TASK_FILES_FORMAT + 1, supervisorPid: 1, bootId: 'later' })}\n`;
    writeFileSync(files.state, record);
    const handle = await env.client.workflow.start('bashTask', {
      taskQueue: worker.taskQueue,
      workflowId: taskId,
      args: [start.input],
      typedSearchAttributes: start.typedSearchAttributes,
      memo: start.memo,
    });
    const line = `task ${taskId}: its files on this host are format v${TASK_FILES_FORMAT + 1}, newer than this worker's (v${TASK_FILES_FORMAT}); left untouched for a worker of the release that wrote them`;
    await expect
      .poll(async () => (await handle.describe()).raw.pendingActivities?.[0]?.lastFailure?.message)
      .toBe(line);
    // Still running, its files as they were: nothing started, no attempt recorded over them.
    expect(await status(taskId)).toBe('running');
    expect(readFileSync(files.state, 'utf8')).toBe(record);
    expect(existsSync(files.attempt)).toBe(false);
    expect(existsSync(files.stdout)).toBe(false);
    await handle.terminate('the test is over');
    // The test's own stand-in for a newer release's task: this worker's teardown would refuse it too.
    rmSync(files.state);
  });
});

describe('bashTask timeout without a command worker', () => {
  it('ends a foreground run at its timeout when no worker takes the command, and marks it lost', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: hostDown.taskQueue });
    const taskId = await tasks.start({
      command: 'echo hi',
      description: 'Say hi',
      background: false,
      timeoutMs: 500,
    });
    const failure = await tasks.result(taskId).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(RunFailedError);
    expect((failure as RunFailedError).status).toBe('lost');
    expect((failure as Error).message).toBe(
      `task ${taskId} timed out after 500ms before any worker started the command`,
    );
    expect(await status(taskId)).toBe('lost');
  });
});

describe('bashTask in the Web UI', () => {
  /** The current details the UI shows, from the workflow's metadata query. */
  async function currentDetails(taskId: TaskId): Promise<string | undefined> {
    const metadata = await env.client.workflow
      .getHandle(taskId)
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    return metadata.currentDetails;
  }

  it('has its description as summary, and details naming its status, host and command, kept current', async () => {
    const tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
    const command = 'echo start; sleep 2';
    const taskId = await tasks.start({ command, description: 'Naps for the UI', background: true });
    let running = '';
    await expect
      .poll(async () => (running = (await currentDetails(taskId)) ?? ''), { timeout: 10_000 })
      .toMatch(/^\[status: running\] host: \S+\n/);
    const hostId = /host: (\S+)/.exec(running)?.[1];
    expect(hostId).toBeDefined();
    expect(running).toBe(`[status: running] host: ${hostId}\n\n\`\`\`bash\n${command}\n\`\`\``);
    await tasks.result(taskId);
    expect(await currentDetails(taskId)).toBe(
      `[status: completed, exit code: 0] host: ${hostId}\n\n\`\`\`bash\n${command}\n\`\`\``,
    );
    const description = await env.client.workflow.getHandle(taskId).describe();
    expect(await description.staticSummary()).toBe('Naps for the UI');
  });
});
