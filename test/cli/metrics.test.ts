/**
 * `durable-bash worker --metrics-port`: the worker as users run it (the built CLI) serves the SDK
 * runtime's metrics and durable-bash's own on /metrics; scraped during a run.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { readRecord } from '../../src/command-host/supervisor/supervisor-records.js';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { freePorts } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

let env: TestWorkflowEnvironment;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterEach(async () => {
  await worker?.crash();
});

afterAll(async () => {
  await env?.teardown();
});

/** The scraped samples: `name{labels} value` lines, by name with their labels and values. */
async function scrape(
  port: number,
): Promise<{ name: string; labels: Record<string, string>; value: number }[]> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a Prometheus sample: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [
          m[1],
          m[2],
        ]),
      );
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}

/** The sum of a metric's samples whose labels include `labels`. */
function total(
  samples: Awaited<ReturnType<typeof scrape>>,
  name: string,
  labels: Record<string, string> = {},
) {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

describe('durable-bash worker --metrics-port', () => {
  it("serves the SDK runtime's metrics and durable-bash's own, with bounded labels", async () => {
    const taskQueue = `metrics-${randomUUID()}`;
    const [port] = await freePorts();
    worker = await startWorkerProcess(env, taskQueue, ['--metrics-port', String(port)]);
    const tasks = new BashTasks({ client: env.client, taskQueue });

    const completed = await tasks.start({
      command: 'printf hello',
      description: 'Says hello',
      background: false,
    });
    expect((await tasks.result(completed)).exitCode).toBe(0);
    const sleeper = await tasks.start({
      command: 'echo up; sleep 600',
      description: 'Sleeps',
      background: true,
    });
    // Read on its host: a read the host did not answer in time (a loaded machine) shows the server's
    // copy, unclaimed, and is read again.
    await expect
      .poll(
        async () => {
          const read = await tasks.read(sleeper, undefined);
          return read.unclaimed ? 'unclaimed' : read.stdout.text;
        },
        { timeout: 15_000 },
      )
      .toBe('up\n');
    const running = await scrape(port);
    expect(total(running, 'durable_bash_commands_running')).toBe(1);
    expect(await tasks.kill(sleeper, undefined)).toBe('killed');
    await tasks.result(sleeper).catch(() => undefined);

    // The workflow's metrics reach the exporter within a moment of the workflow task.
    await expect
      .poll(async () => total(await scrape(port), 'durable_bash_tasks_ended_total', { status: 'killed' }), {
        timeout: 10_000,
      })
      .toBe(1);
    const samples = await scrape(port);
    expect({
      started: total(samples, 'durable_bash_tasks_started_total'),
      startedInBackground: total(samples, 'durable_bash_tasks_started_total', { background: 'true' }),
      completed: total(samples, 'durable_bash_tasks_ended_total', { status: 'completed' }),
      killed: total(samples, 'durable_bash_tasks_ended_total', { status: 'killed' }),
      kills: total(samples, 'durable_bash_kills_total'),
      commandsStarted: total(samples, 'durable_bash_commands_started_total'),
      running: total(samples, 'durable_bash_commands_running'),
      stdoutBytes: total(samples, 'durable_bash_output_bytes_total', { stream: 'stdout' }),
      stops: total(samples, 'durable_bash_stops_total'),
      supervisorStartFailures: total(samples, 'durable_bash_supervisor_start_failures_total'),
    }).toEqual({
      started: 2,
      startedInBackground: 1,
      completed: 1,
      killed: 1,
      kills: 1,
      commandsStarted: 2,
      running: 0,
      stdoutBytes: 'hello'.length + 'up\n'.length,
      stops: 1,
      supervisorStartFailures: 0,
    });
    expect(total(samples, 'durable_bash_reads_served_total')).toBeGreaterThan(0);
    // The SDK runtime's own metrics are served beside them, with its prefix.
    expect(samples.some((s) => s.name.startsWith('temporal_'))).toBe(true);
    // No label takes a task's id, its owner or the command.
    const ours = samples.filter((s) => s.name.startsWith('durable_bash_'));
    for (const sample of ours)
      for (const value of Object.values(sample.labels))
        expect(value).not.toMatch(/bash-[0-9a-f]{8}|sleep|hello/);
    // Counters end in _total.
    for (const name of new Set(ours.map((s) => s.name)))
      expect(name).toMatch(/_total$|^durable_bash_commands_running$|_bucket$|_sum$|_count$/);
  });

  it('counts a re-attach after a worker restart, and a command found lost by its reason', async () => {
    const taskQueue = `metrics-${randomUUID()}`;
    const [port] = await freePorts();
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-metrics-'));
    const args = ['--metrics-port', String(port), '--host-id', 'metrics-host', '--spill-dir', spillDir];
    worker = await startWorkerProcess(env, taskQueue, args);
    const tasks = new BashTasks({ client: env.client, taskQueue });
    const survivor = await tasks.start({
      command: 'echo up; sleep 600',
      description: 'Survives',
      background: true,
    });
    const doomed = await tasks.start({
      command: 'echo up; sleep 600',
      description: 'Loses its supervisor',
      background: true,
    });
    for (const taskId of [survivor, doomed])
      await expect
        .poll(async () => (await tasks.read(taskId, undefined)).stdout.text, { timeout: 15_000 })
        .toBe('up\n');
    const record = await readRecord(taskFiles(spillDir, doomed).state);
    await worker.crash();
    if (record === undefined) throw new Error('no state record');
    // The supervisor first: alive, it could reap the command killed before it and record the end.
    process.kill(record.supervisorPid, 'SIGKILL');
    process.kill(-record.pid, 'SIGKILL');
    worker = await startWorkerProcess(env, taskQueue, args);
    await tasks.result(doomed).catch(() => undefined);
    await expect
      .poll(async () => total(await scrape(port), 'durable_bash_reattaches_total'), { timeout: 15_000 })
      .toBe(2);
    const samples = await scrape(port);
    expect(total(samples, 'durable_bash_commands_lost_total', { reason: 'supervisor_killed' })).toBe(1);
    expect(total(samples, 'durable_bash_commands_running')).toBe(1);
    expect(await tasks.kill(survivor, undefined)).toBe('killed');
    await tasks.result(survivor).catch(() => undefined);
    await endLeftCommands(spillDir);
  });

  it('counts completion notices delivered, and dropped when no agent host took them in their window', async () => {
    const taskQueue = `metrics-${randomUUID()}`;
    const [port] = await freePorts();
    worker = await startWorkerProcess(env, taskQueue, ['--metrics-port', String(port)]);
    // One agent host serves its queue (its session is live); the other's queue has no worker.
    const servedQueue = `agent-${randomUUID()}`;
    const agentWorker = await startAgentWorker(env, {
      taskQueue: servedQueue,
      agents: { inject: async () => true },
    });
    try {
      const startIn = async (agentTaskQueue: string, noticeWindowMs?: number) => {
        const bash = createBashTools({
          client: env.client,
          taskQueue,
          agentTaskQueue,
          ...(noticeWindowMs !== undefined ? { noticeWindowMs } : {}),
        }).find((tool) => tool.name === 'bash') as Tool;
        await bash.execute(
          { command: 'true', description: 'Ends at once', run_in_background: true },
          { agent: { sessionId: `session-${randomUUID()}` } },
        );
      };
      await startIn(servedQueue);
      await startIn(`nobody-${randomUUID()}`, 500);
      await expect
        .poll(
          async () => {
            const samples = await scrape(port);
            return {
              delivered: total(samples, 'durable_bash_notices_delivered_total'),
              expired: total(samples, 'durable_bash_notices_dropped_total', { reason: 'expired' }),
            };
          },
          { timeout: 15_000 },
        )
        .toEqual({ delivered: 1, expired: 1 });
    } finally {
      await agentWorker.stop();
    }
  });
});
