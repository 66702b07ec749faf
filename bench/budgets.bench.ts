/**
 * Measures the budgets of DESIGN.md §4 on this machine and writes BENCHMARKS.md: one dev server,
 * one command worker in its own process (the CLI's `worker`), the tools as an agent host uses them.
 * Latencies are reported against a direct `child_process.spawn('bash', ['-c', cmd])` of the same run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supervisorPath } from '../src/activities/supervisor.js';
import { BashTasks } from '../src/client/bash-tasks.js';
import { findTemporalBinary, TemporalBinary } from '../src/dev-server/binaries.js';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import type { Tool, ToolResult } from '../src/tools/types.js';
import { processesMatching, waitFor } from '../test/helpers/processes.js';
import { createDevServerEnv } from '../test/helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../test/helpers/worker-process.js';

const SAMPLES = 100;
const KILL_SAMPLES = 30;
const INPUT_SAMPLES = 30;
const CONCURRENT_TASKS = 1_000;
const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

interface Row {
  measure: string;
  result: string;
  budget: string;
  within: boolean | undefined;
}

const rows: Row[] = [];
let env: TestWorkflowEnvironment;
let worker: WorkerProcess;
let tools: Record<string, Tool>;
let tasks: BashTasks;
const taskQueue = `bench-${randomUUID()}`;

beforeAll(async () => {
  env = await createDevServerEnv();
  worker = await startWorkerProcess(env, taskQueue);
  tools = Object.fromEntries(
    createBashTools({ client: env.client, taskQueue }).map((tool) => [tool.name, tool]),
  );
  tasks = new BashTasks({ client: env.client, taskQueue });
});

afterAll(async () => {
  await worker?.crash();
  await env?.teardown();
  writeFileSync('BENCHMARKS.md', report());
});

const text = (result: ToolResult) => result.content.map((block) => block.text).join('');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function directSpawn(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn('bash', ['-c', command], { stdio: 'ignore' })
      .on('exit', () => resolve())
      .on('error', reject);
  });
}

async function startBackground(
  command: string,
  using = tools,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const started = text(
    await (using.bash as Tool).execute({
      command,
      description: 'Benchmark',
      run_in_background: true,
      ...extra,
    }),
  );
  return started.replace('started background task ', '');
}

/**
 * Runs `fn` against a worker process of its own (a heap never shrinks, so memory is measured on a
 * fresh one), sampling its RSS every 100 ms; resolves to `fn`'s value, the peak, and the RSS of
 * the idle worker before `fn` ran.
 */
async function onFreshWorker<T>(
  fn: (using: Record<string, Tool>, spillDir: string) => Promise<T>,
): Promise<{ value: T; peakBytes: number; idleBytes: number }> {
  const queue = `bench-${randomUUID()}`;
  const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bench-'));
  const fresh = await startWorkerProcess(env, queue, ['--spill-dir', spillDir]);
  await sleep(2_000); // Settled after start-up.
  const idleBytes = fresh.rssBytes();
  const using = Object.fromEntries(
    createBashTools({ client: env.client, taskQueue: queue }).map((tool) => [tool.name, tool]),
  );
  let peakBytes = fresh.rssBytes();
  const sampler = setInterval(() => {
    peakBytes = Math.max(peakBytes, fresh.rssBytes());
  }, 100);
  try {
    const value = await fn(using, spillDir);
    return { value, peakBytes: Math.max(peakBytes, fresh.rssBytes()), idleBytes };
  } finally {
    clearInterval(sampler);
    await fresh.crash();
  }
}

describe('DESIGN.md §4 budgets', () => {
  let directP50 = 0;
  let directP99 = 0;

  it('foreground bash of a trivial command, against a direct spawn', async () => {
    for (let i = 0; i < 5; i++) {
      await directSpawn('true');
      await (tools.bash as Tool).execute({ command: 'true', description: 'Warm up' });
    }
    const direct: number[] = [];
    const viaTool: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      direct.push(await timed(() => directSpawn('true')));
      viaTool.push(
        await timed(() => (tools.bash as Tool).execute({ command: 'true', description: 'Trivial' })),
      );
    }
    directP50 = percentile(direct, 50);
    directP99 = percentile(direct, 99);
    const addedP50 = percentile(viaTool, 50) - directP50;
    const addedP99 = percentile(viaTool, 99) - directP99;
    rows.push(
      {
        measure: 'direct spawn of `bash -c true` (baseline)',
        result: `p50 ${ms(directP50)}, p99 ${ms(directP99)}`,
        budget: '',
        within: undefined,
      },
      {
        measure: 'foreground `bash` of `true`: added latency',
        result: `p50 +${ms(addedP50)} (${(percentile(viaTool, 50) / directP50).toFixed(1)}x direct), p99 +${ms(addedP99)} (${(percentile(viaTool, 99) / directP99).toFixed(1)}x)`,
        budget: 'p50 <= 25 ms, p99 <= 80 ms',
        within: addedP50 <= 25 && addedP99 <= 80,
      },
    );
  });

  it('background start: the tool returns the id', async () => {
    const starts: number[] = [];
    for (let i = 0; i < SAMPLES; i++) starts.push(await timed(() => startBackground('true')));
    const p50 = percentile(starts, 50);
    rows.push({
      measure: 'background start (tool returns the id)',
      result: `p50 ${ms(p50)} (${(p50 / directP50).toFixed(1)}x a direct spawn), p99 ${ms(percentile(starts, 99))}`,
      budget: 'p50 <= 15 ms',
      within: p50 <= 15,
    });
  });

  it('output visible to bash_output after it is printed', async () => {
    const taskId = await startBackground('for i in $(seq 1 100); do date +%s%N; sleep 0.05; done');
    const latencies: number[] = [];
    let pending = '';
    for (;;) {
      const read = await tasks.read(taskId, undefined);
      const now = Date.now();
      pending += read.stdout.text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) latencies.push(now - Number(line) / 1e6);
      if (read.state.status !== 'running' && read.stdout.text === '') break;
    }
    expect(latencies.length).toBe(100);
    const p95 = percentile(latencies, 95);
    rows.push({
      measure: 'output printed -> visible to `bash_output` (reads back to back)',
      result: `p50 ${ms(percentile(latencies, 50))}, p95 ${ms(p95)}, max ${ms(Math.max(...latencies))} (100 lines)`,
      budget: 'p95 <= 500 ms',
      within: p95 <= 500,
    });
  });

  it('bash_input to the program, and its answer back through a waiting bash_output', async () => {
    const taskId = await startBackground('while read -r line; do echo "got $line"; done', tools, {
      keep_stdin_open: true,
    });
    await (tools.bash_input as Tool).execute({ task_id: taskId, text: 'warm-up\n' });
    await (tools.bash_output as Tool).execute({ task_id: taskId, wait_ms: 10_000 });
    const writes: number[] = [];
    const roundTrips: number[] = [];
    for (let i = 0; i < INPUT_SAMPLES; i++) {
      const began = performance.now();
      const wrote = text(await (tools.bash_input as Tool).execute({ task_id: taskId, text: `${i}\n` }));
      writes.push(performance.now() - began);
      expect(wrote).toBe(`wrote ${String(i).length + 1} bytes to the stdin of task ${taskId}`);
      let seen = '';
      while (!seen.includes(`got ${i}\n`))
        seen += text(await (tools.bash_output as Tool).execute({ task_id: taskId, wait_ms: 10_000 }));
      roundTrips.push(performance.now() - began);
    }
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
    rows.push({
      measure: '`bash_input` call -> answered (bytes written on the host)',
      result: `p50 ${ms(percentile(writes, 50))}, p95 ${ms(percentile(writes, 95))} (${INPUT_SAMPLES} writes)`,
      budget: '',
      within: undefined,
    });
    rows.push({
      measure: "`bash_input` -> the program's answer returned by `bash_output` with `wait_ms`",
      result: `p50 ${ms(percentile(roundTrips, 50))}, p95 ${ms(percentile(roundTrips, 95))} (${INPUT_SAMPLES} round trips)`,
      budget: '',
      within: undefined,
    });
  });

  it('a foreground timeout, from the call to its answer', async () => {
    const timeoutMs = 500;
    const answers: number[] = [];
    for (let i = 0; i < 20; i++) {
      answers.push(
        await timed(() =>
          (tools.bash as Tool).execute({ command: 'sleep 10', description: 'Time out', timeoutMs }),
        ),
      );
    }
    rows.push({
      measure: `foreground \`sleep 10\` with timeoutMs ${timeoutMs}: call -> answer`,
      result: `p50 ${ms(percentile(answers, 50))}, p95 ${ms(percentile(answers, 95))} (20 runs)`,
      budget: '',
      within: undefined,
    });
  });

  it('bash_kill to process-group death', async () => {
    const marker = 9000 + Math.floor(Math.random() * 900);
    const kills: number[] = [];
    for (let i = 0; i < KILL_SAMPLES; i++) {
      const taskId = await startBackground(`sleep ${marker} & wait`);
      await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 1);
      kills.push(await timed(() => (tools.bash_kill as Tool).execute({ task_id: taskId })));
      // The tool answers once the run reported the group's end: nothing may be left.
      expect(processesMatching(new RegExp(`^sleep ${marker}$`))).toEqual([]);
    }
    const p95 = percentile(kills, 95);
    rows.push({
      measure: '`bash_kill` call -> answered, process group gone',
      result: `p50 ${ms(percentile(kills, 50))}, p95 ${ms(p95)} (${KILL_SAMPLES} kills)`,
      budget: 'p95 <= 1 s',
      within: p95 <= 1000,
    });
  });

  it(`${CONCURRENT_TASKS} concurrent background sleeps on one worker`, async () => {
    const marker = 8000 + Math.floor(Math.random() * 900);
    const running = () => processesMatching(new RegExp(`^sleep ${marker}$`)).length;
    const { peakBytes, idleBytes, value } = await onFreshWorker(async (using, spillDir) => {
      const ids: string[] = [];
      const startedMs = await timed(async () => {
        for (let i = 0; i < CONCURRENT_TASKS; i += 20) {
          const batch = Array.from({ length: 20 }, () => startBackground(`sleep ${marker}`, using));
          ids.push(...(await Promise.all(batch)));
        }
        // `ps` over thousands of processes costs a core: look twice a second, not twenty times.
        await waitFor(() => running() === CONCURRENT_TASKS, 10 * 60_000, 500);
      });
      await sleep(15_000); // Steady state: every task heartbeating.
      const supervisors = supervisorPssBytes(spillDir);
      const killedMs = await timed(async () => {
        for (let i = 0; i < ids.length; i += 50) {
          await Promise.all(ids.slice(i, i + 50).map((id) => env.client.workflow.getHandle(id).cancel()));
        }
        await waitFor(() => running() === 0, 10 * 60_000, 500);
      });
      return { startedMs, killedMs, supervisors };
    });
    const growth = peakBytes - idleBytes;
    const perTask = (growth + value.supervisors.bytes) / CONCURRENT_TASKS;
    rows.push({
      measure: `${CONCURRENT_TASKS} concurrent background \`sleep\` tasks: worker growth + supervisors' PSS`,
      result: `${mib(growth + value.supervisors.bytes)} = worker growth ${mib(growth)} (peak ${mib(peakBytes)}, idle ${mib(idleBytes)}) + ${value.supervisors.count} supervisors' PSS ${mib(value.supervisors.bytes)} (${(value.supervisors.bytes / value.supervisors.count / 1024).toFixed(0)} KiB each); ${(perTask / 1024).toFixed(0)} KiB per task (all running ${(value.startedMs / 1000).toFixed(1)} s after the first start; all gone ${(value.killedMs / 1000).toFixed(1)} s after the kills began)`,
      budget: '<= 500 MB (500 KB per task); all running within 20 s',
      within: growth + value.supervisors.bytes <= 500 * 1000 * 1000 && value.startedMs <= 20_000,
    });
  });

  it('one task printing 1 GiB', async () => {
    const command = `yes 'durable-bash benchmark line' | head -c ${GIB}`;
    const {
      peakBytes,
      idleBytes,
      value: taskId,
    } = await onFreshWorker(async (using) => {
      const taskId = await startBackground(command, using);
      await env.client.workflow.getHandle(taskId).result();
      return taskId;
    });
    const handle = env.client.workflow.getHandle(taskId);
    const result = await handle.result();
    const info = (await handle.describe()).raw.workflowExecutionInfo;
    const spillPath = result.stdout.spillPath ?? '';
    const expected = execFileSync('bash', ['-c', `${command} | sha256sum`], { encoding: 'utf8' }).split(
      ' ',
    )[0];
    const actual = await new Promise<string>((resolve, reject) => {
      const hash = createHash('sha256');
      createReadStream(spillPath)
        .on('data', (chunk) => hash.update(chunk))
        .on('end', () => resolve(hash.digest('hex')))
        .on('error', reject);
    });
    rmSync(spillPath, { force: true });
    const historyBytes = Number(info?.historySizeBytes);
    const exact = actual === expected && result.stdout.bytes === GIB;
    rows.push({
      measure: 'one task printing 1 GiB',
      result: `worker RSS peak ${mib(peakBytes)}, idle worker ${mib(idleBytes)}; history ${(historyBytes / 1024).toFixed(0)} KiB in ${info?.historyLength} events; spill file ${exact ? 'byte-exact (sha256)' : 'NOT byte-exact'}`,
      budget: 'RSS <= 200 MB, history <= 5 MB, byte-exact',
      within: peakBytes <= 200 * 1000 * 1000 && historyBytes <= 5 * 1000 * 1000 && exact,
    });
  });
});

function report(): string {
  const cpus = os.cpus();
  const cli = findTemporalBinary(TemporalBinary.cli);
  const temporalVersion =
    cli.kind === 'download' ? 'unknown' : execFileSync(cli.path, ['--version'], { encoding: 'utf8' }).trim();
  const lines = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/budgets.bench.ts); numbers from one run. Budgets: DESIGN.md §4.',
    '',
    `- when: ${new Date().toISOString()}`,
    `- machine: ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / GIB).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}`,
    `- software: Node ${process.version}, ${temporalVersion} (dev server, in-memory), @temporalio/* 1.24.0`,
    '- setup: one dev server, one `durable-bash worker` process, the tools in the benchmark process',
    '',
    '| measure | result | budget | within |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.measure} | ${row.result} | ${row.budget} | ${row.within === undefined ? '' : row.within ? 'yes' : 'no'} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

/** The summed PSS of the supervisors running commands from `spillDir` (their args name it). */
function supervisorPssBytes(spillDir: string): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!args.startsWith(supervisorPath()) || !args.includes(spillDir)) continue;
      const kib = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${entry}/smaps_rollup`, 'utf8'))?.[1];
      count++;
      bytes += Number(kib) * 1024;
    } catch {
      // Ended while we looked.
    }
  }
  return { count, bytes };
}
