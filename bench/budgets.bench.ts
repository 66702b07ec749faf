/**
 * Measures DESIGN.md §4 against floors taken in the same run on the same server: a direct
 * `spawn('bash', ['-c', 'true'])`, Temporal's own minimum round trip (a trivial workflow running one
 * trivial activity, on a worker of its own in this process), and Temporal's own burst floor (N
 * workflows from 8 callers, each running one activity that heartbeats once a minute). durable-bash
 * runs as users run it: a `durable-bash worker` process, the tools in this process.
 *
 * Run by bench/run.mjs (`npm run bench [-- --quick] [-- --server file]`), which passes
 * BENCH_MODE (quick | full), BENCH_SERVER (memory | file | cluster) and BENCH_OUT (the JSON to write).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_INTERVAL_MS } from '../src/shared/limits.js';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import { waitFor } from '../test/helpers/processes.js';
import type { WorkerProcess } from '../test/helpers/worker-process.js';
import {
  dist,
  type Figure,
  fixed,
  kOf,
  type LatencyFloors,
  latencyFigure,
  mib,
  ms,
  ratioOr,
  rawDist,
  seconds,
  writeRunJson,
} from './lib/figures.js';
import { runFloorBurst } from './lib/floor-burst.js';
import { bundleFloorWorkflows, type FloorBundle, startFloorWorker } from './lib/floor-worker.js';
import {
  alive,
  attemptsSince,
  CpuByProgram,
  CpuSpan,
  cancelAll,
  directSpawn,
  endLeftovers,
  groupAlive,
  inLanes,
  programsPerTask,
  StartedRecords,
  settledRss,
  sleep,
  startBackground,
  startWorker,
  supervisorsOf,
  type Tools,
  text,
  timed,
} from './lib/host.js';
import { type CostCounters, costCounters, hasCostSeries, scrape, subtract } from './lib/metrics.js';
import { type BenchServer, type ServerKind, startBenchServer } from './lib/server.js';

const QUICK = process.env.BENCH_MODE === 'quick';

/**
 * A new worker's idle RSS: settled in a full run (a warm worker, as fleets run them; `settledRss`),
 * 2 s after its start in a quick one (CI's time).
 */
async function idleRssOf(worker: {
  rssBytes(): number;
}): Promise<{ bytes: number; at2s: number; afterMs: number }> {
  if (!QUICK) return settledRss(worker);
  await sleep(2_000);
  const bytes = worker.rssBytes();
  return { bytes, at2s: bytes, afterMs: 2_000 };
}

const idleText = (idle: { bytes: number; at2s: number; afterMs: number }) =>
  idle.afterMs <= 2_000
    ? `${mib(idle.bytes)} at 2 s`
    : `${mib(idle.bytes)} settled after ${seconds(idle.afterMs)} (${mib(idle.at2s)} at 2 s)`;
const SERVER = (process.env.BENCH_SERVER ?? 'memory') as ServerKind;
const OUT = process.env.BENCH_OUT;

const SIZES = QUICK
  ? {
      foreground: 80,
      background: 50,
      visibleLines: 40,
      waitedLines: 20,
      kills: 15,
      inputs: 10,
      timeouts: 3,
      burst: 100,
      windowMs: 10_000,
      chatty: 5,
      restartSample: 20,
      steadyMs: 3_000,
      printBytes: 64 * 1024 ** 2,
    }
  : {
      foreground: 500,
      background: 200,
      visibleLines: 100,
      waitedLines: 100,
      kills: 50,
      inputs: 30,
      timeouts: 20,
      burst: 1_000,
      windowMs: 240_000,
      chatty: 10,
      restartSample: 50,
      steadyMs: 65_000,
      printBytes: 1024 ** 3,
    };
const CALLERS = 8;
/** A burst's deadline: past it the figure is reported as not reached. */
const BURST_DEADLINE_MS = 15 * 60_000;
const RESTART_DEADLINE_MS = 120_000;
const UNAVAILABLE = '[task worker unavailable:';

const began = performance.now();
const log = (message: string) =>
  console.log(`[bench ${SERVER} ${seconds(performance.now() - began).padStart(7)}] ${message}`);

const figures: Figure[] = [];
const notes: string[] = [];
const extra: Record<string, unknown> = {};
let server: BenchServer;
let worker: WorkerProcess;
let tools: Tools;
let floorWorker: Worker;
let floorRunning: Promise<void>;
let workflowBundle: FloorBundle;
const taskQueue = `bench-${randomUUID()}`;
const floorQueue = `bench-floor-${randomUUID()}`;
const spillDirs: string[] = [];
let mainSpillDir: string;
/** Filled by the foreground case; every later latency is put against them. */
let floors: LatencyFloors | undefined;

function spillDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bench-'));
  spillDirs.push(dir);
  return dir;
}

function toolsFor(queue: string): Tools {
  return Object.fromEntries(
    createBashTools({ client: server.client, taskQueue: queue }).map((tool) => [tool.name, tool]),
  ) as Tools;
}

const needFloors = (): LatencyFloors => {
  if (!floors) throw new Error('the foreground case (the floors) did not run');
  return floors;
};

beforeAll(async () => {
  log(`mode ${QUICK ? 'quick' : 'full'}; starting the server`);
  server = await startBenchServer(SERVER);
  log(`${server.description} at ${server.address}, Temporal ${server.version}`);
  workflowBundle = await bundleFloorWorkflows();
  ({ worker: floorWorker, running: floorRunning } = await startFloorWorker(
    server,
    floorQueue,
    workflowBundle,
  ));
  mainSpillDir = spillDir();
  worker = await startWorker(server, taskQueue, mainSpillDir);
  const idle = await idleRssOf(worker);
  figures.push({
    id: 'worker.idleRss',
    measure: 'an idle `durable-bash worker` process: RSS',
    raw: idleText(idle),
    value: idle.bytes / 1e6,
    unit: 'MB',
    ratio: null,
    ratioText: '',
    target: '',
    holds: null,
  });
  tools = toolsFor(taskQueue);
}, 300_000);

afterAll(async () => {
  try {
    floorWorker?.shutdown();
    await floorRunning;
    await worker?.crash();
    await server?.stop();
  } finally {
    for (const dir of spillDirs) {
      const ended = endLeftovers(dir);
      if (ended > 0)
        notes.push(`${ended} tasks were still running at the end (a case failed part-way); killed`);
      rmSync(dir, { recursive: true, force: true });
    }
    writeRunJson(OUT, {
      server: server && { kind: server.kind, description: server.description, version: server.version },
      mode: QUICK ? 'quick' : 'full',
      sizes: SIZES,
      durationMs: performance.now() - began,
      figures,
      notes,
      extra,
    });
  }
}, 120_000);

/** One run of Temporal's minimum round trip: a trivial workflow running one trivial activity. */
function roundTrip(): Promise<unknown> {
  return server.client.workflow.execute('roundTripFloor', {
    taskQueue: floorQueue,
    workflowId: `floor-${randomUUID()}`,
  });
}

/**
 * The same round trip paying a run's three guarantees (bench/floor/workflows.ts
 * `guardedRoundTripFloor`): a local activity before the activity, a heartbeat in it, an upsert.
 */
function guardedRoundTrip(): Promise<unknown> {
  return server.client.workflow.execute('guardedRoundTripFloor', {
    taskQueue: floorQueue,
    workflowId: `guarded-${randomUUID()}`,
  });
}

describe(`DESIGN.md §4 on ${SERVER}`, () => {
  it('foreground bash of true, interleaved with its floors', async () => {
    for (let i = 0; i < 10; i++) {
      await directSpawn('true');
      await roundTrip();
      await guardedRoundTrip();
      await tools.bash.execute({ command: 'true', description: 'Warm up' });
    }
    const spawnMs: number[] = [];
    const floorMs: number[] = [];
    const guardedMs: number[] = [];
    const toolMs: number[] = [];
    const steps = [
      async () => spawnMs.push(await timed(() => directSpawn('true'))),
      async () => floorMs.push(await timed(roundTrip)),
      async () => guardedMs.push(await timed(guardedRoundTrip)),
      async () =>
        toolMs.push(await timed(() => tools.bash.execute({ command: 'true', description: 'Trivial' }))),
    ];
    // Each round in a rotated order, so no one of the three always follows another.
    for (let i = 0; i < SIZES.foreground; i++)
      for (let j = 0; j < steps.length; j++) await (steps[(i + j) % steps.length] as () => Promise<number>)();
    floors = { spawn: dist(spawnMs), floor: dist(floorMs) };
    const guarded = { spawn: floors.spawn, floor: dist(guardedMs) };
    const tool = dist(toolMs);
    extra.floors = floors;
    extra.guardedFloor = guarded.floor;
    const k50 = kOf(floors, 'p50', tool.p50);
    const k99 = kOf(floors, 'p99', tool.p99);
    const guardedK50 = kOf(guarded, 'p50', tool.p50);
    log(
      `spawn p50 ${ms(floors.spawn.p50)}, floor p50 ${ms(floors.floor.p50)}, with the guarantees ${ms(guarded.floor.p50)}, bash p50 ${ms(tool.p50)} (k ${fixed(k50)}; ${fixed(guardedK50)} against the guarded floor), p99 ${ms(tool.p99)} (k ${fixed(k99)})`,
    );
    figures.push(
      {
        id: 'floor.spawn',
        measure: "floor: direct `spawn('bash', ['-c', 'true'])`",
        raw: rawDist(floors.spawn),
        value: floors.spawn.p50,
        unit: 'ms',
        ratio: null,
        ratioText: '(floor)',
        target: '',
        holds: null,
      },
      {
        id: 'floor.roundTrip',
        measure: 'floor: Temporal round trip (a workflow running one trivial activity)',
        raw: rawDist(floors.floor),
        value: floors.floor.p50,
        unit: 'ms',
        ratio: null,
        ratioText: '(floor)',
        target: '',
        holds: null,
      },
      latencyFigure(floors, {
        id: 'foreground.p50',
        measure: 'foreground `bash` of `true`, p50',
        d: tool,
        pct: 'p50',
        target: 'p50 <= spawn + 1.10 x floor',
        holds: k50 !== null && k50 <= 1.1,
        gateSlack: 0.5,
      }),
      {
        id: 'floor.guardedRoundTrip',
        measure:
          "floor: that round trip paying a run's guarantees (a local activity first, a heartbeat, a search attribute upserted)",
        raw: rawDist(guarded.floor),
        value: guarded.floor.p50,
        unit: 'ms',
        ratio: null,
        ratioText: `(floor; ${fixed(ratioOr(guarded.floor.p50, floors.floor.p50))} x the round trip)`,
        target: '',
        holds: null,
      },
      {
        ...latencyFigure(guarded, {
          id: 'foreground.p50.guardedFloor',
          measure: 'foreground `bash` of `true`, p50, against the floor paying the same guarantees',
          d: tool,
          pct: 'p50',
          target: 'p50 <= spawn + 1.10 x that floor',
          holds: guardedK50 !== null && guardedK50 <= 1.1,
          gateSlack: 0.5,
        }),
        ratioText: `p50: spawn + ${fixed(guardedK50)} x that floor`,
      },
      latencyFigure(floors, {
        id: 'foreground.p99',
        measure: 'foreground `bash` of `true`, p99',
        d: tool,
        pct: 'p99',
        target: 'p99 <= spawn + 1.5 x floor',
        holds: k99 !== null && k99 <= 1.5,
        gateSlack: 1.5,
      }),
    );
  });

  it('background start: the tool returns the id', async () => {
    const f = needFloors();
    const starts: number[] = [];
    const ids: string[] = [];
    // Temporal's own start of a workflow (the floor's), interleaved: what the start RPC alone costs here.
    const rpcStarts: number[] = [];
    const floorIds: string[] = [];
    for (let i = 0; i < SIZES.background; i++) {
      starts.push(await timed(async () => ids.push(await startBackground(tools, 'true'))));
      rpcStarts.push(
        await timed(async () => {
          const handle = await server.client.workflow.start('roundTripFloor', {
            taskQueue: floorQueue,
            workflowId: `floor-${randomUUID()}`,
          });
          floorIds.push(handle.workflowId);
        }),
      );
    }
    const d = dist(starts);
    const rpc = dist(rpcStarts);
    const multiple = ratioOr(d.p50, f.floor.p50);
    log(
      `background start p50 ${ms(d.p50)} = ${fixed(multiple)} x floor; Temporal's start of a workflow p50 ${ms(rpc.p50)} = ${fixed(ratioOr(rpc.p50, f.floor.p50))} x floor`,
    );
    figures.push({
      id: 'floor.start',
      measure: "floor: Temporal's start of a workflow (`client.workflow.start`, the floor's workflow), p50",
      raw: rawDist(rpc),
      value: rpc.p50,
      unit: 'ms',
      ratio: ratioOr(rpc.p50, f.floor.p50),
      ratioText: `p50: ${fixed(ratioOr(rpc.p50, f.floor.p50))} x floor; the tool's start is ${fixed(ratioOr(d.p50, rpc.p50))} x this`,
      target: '',
      holds: null,
    });
    figures.push({
      id: 'background.start.p50',
      measure: 'background start (the tool returns the id), p50',
      raw: rawDist(d),
      value: d.p50,
      unit: 'ms',
      ratio: multiple,
      ratioText: `p50: ${fixed(multiple)} x floor (spawn + ${fixed(kOf(f, 'p50', d.p50))} x floor)`,
      target: 'p50 <= 0.5 x floor',
      holds: multiple !== null && multiple <= 0.5,
      gateSlack: 0.5,
    });
    for (const id of [...ids, ...floorIds]) await server.client.workflow.getHandle(id).result();
  });

  it('output visible to bash_output after it is printed (reads back to back)', async () => {
    const taskId = await startBackground(
      tools,
      `for i in $(seq 1 ${SIZES.visibleLines}); do date +%s%N; sleep 0.05; done`,
    );
    const latencies = await readTimestamps(taskId, SIZES.visibleLines, 0);
    const d = dist(latencies);
    log(`visible to bash_output: p95 ${ms(d.p95)}`);
    figures.push(
      latencyFigure(needFloors(), {
        id: 'visible.p95',
        measure: 'output printed -> visible to `bash_output` (reads back to back), p95',
        d,
        pct: 'p95',
        what: 'lines',
        target: 'p95 <= 250 ms',
        holds: d.p95 <= 250 && d.n === SIZES.visibleLines,
        gateSlack: 1,
      }),
    );
  });

  it('output visible to a bash_output waiting with wait_ms', async () => {
    const f = needFloors();
    const taskId = await startBackground(
      tools,
      `for i in $(seq 1 ${SIZES.waitedLines}); do sleep 0.25; date +%s%N; done`,
    );
    const latencies = await readTimestamps(taskId, SIZES.waitedLines, 10_000);
    const d = dist(latencies);
    const multiple = ratioOr(d.p95, f.floor.p95);
    log(`visible to a waiting bash_output: p95 ${ms(d.p95)} = ${fixed(multiple)} x floor p95`);
    figures.push({
      ...latencyFigure(f, {
        id: 'visible.wait.p95',
        measure: 'output printed -> returned by a `bash_output` waiting with `wait_ms`, p95',
        d,
        pct: 'p95',
        what: 'lines',
        target: 'p95 <= 0.6 x floor (p95)',
        holds: multiple !== null && multiple <= 0.6 && d.n === SIZES.waitedLines,
        gateSlack: 1,
      }),
      ratioText: `p95: ${fixed(multiple)} x floor (spawn + ${fixed(kOf(f, 'p95', d.p95))} x floor)`,
    });
  });

  it('bash_input to the program, and its answer back through a waiting bash_output', async () => {
    const f = needFloors();
    const taskId = await startBackground(tools, 'while read -r line; do echo "got $line"; done', {
      keep_stdin_open: true,
    });
    await tools.bash_input.execute({ task_id: taskId, text: 'warm-up\n' });
    await tools.bash_output.execute({ task_id: taskId, wait_ms: 10_000 });
    const writes: number[] = [];
    const roundTrips: number[] = [];
    for (let i = 0; i < SIZES.inputs; i++) {
      const start = performance.now();
      const wrote = text(await tools.bash_input.execute({ task_id: taskId, text: `${i}\n` }));
      writes.push(performance.now() - start);
      expect(wrote).toContain(`wrote ${String(i).length + 1} bytes`);
      let seen = '';
      while (!seen.includes(`got ${i}\n`))
        seen += text(await tools.bash_output.execute({ task_id: taskId, wait_ms: 10_000 }));
      roundTrips.push(performance.now() - start);
    }
    await tools.bash_kill.execute({ task_id: taskId });
    const w = dist(writes);
    const r = dist(roundTrips);
    figures.push(
      latencyFigure(f, {
        id: 'input.write.p50',
        measure: '`bash_input` call -> answered (bytes written on the host), p50',
        d: w,
        pct: 'p50',
        what: 'writes',
        target: '',
        holds: null,
      }),
      latencyFigure(f, {
        id: 'input.roundTrip.p50',
        measure: "`bash_input` -> the program's answer returned by a waiting `bash_output`, p50",
        d: r,
        pct: 'p50',
        what: 'round trips',
        target: '',
        holds: null,
      }),
    );
  });

  it('a foreground timeout, from the call to its answer', async () => {
    const timeoutMs = 500;
    const answers: number[] = [];
    for (let i = 0; i < SIZES.timeouts; i++)
      answers.push(
        await timed(() => tools.bash.execute({ command: 'sleep 10', description: 'Time out', timeoutMs })),
      );
    const d = dist(answers);
    figures.push({
      id: 'timeout.p50',
      measure: `foreground \`sleep 10\` with timeoutMs ${timeoutMs}: call -> answer, p50`,
      raw: rawDist(d, 'runs'),
      value: d.p50,
      unit: 'ms',
      ratio: ratioOr(d.p50 - timeoutMs, needFloors().floor.p50),
      ratioText: `timeout + ${fixed(ratioOr(d.p50 - timeoutMs, needFloors().floor.p50))} x floor`,
      target: '',
      holds: null,
    });
  });

  it('bash_kill to the whole task gone', async () => {
    const records = new StartedRecords(mainSpillDir);
    const kills: number[] = [];
    for (let i = 0; i < SIZES.kills; i++) {
      // A group of two: the task's bash and its child; the group is gone when neither is left.
      const taskId = await startBackground(tools, 'sleep 600 & wait');
      await waitFor(() => records.of(taskId) !== undefined);
      const group = (records.of(taskId) as { pid: number }).pid;
      kills.push(
        await timed(async () => {
          const answer = text(await tools.bash_kill.execute({ task_id: taskId }));
          expect(answer).toContain('killed');
          // The tool should answer once the group is gone; if not, the wait counts.
          await waitFor(() => !groupAlive(group), 10_000, 5);
        }),
      );
    }
    const d = dist(kills);
    log(`bash_kill to gone: p95 ${ms(d.p95)}`);
    figures.push(
      latencyFigure(needFloors(), {
        id: 'kill.p95',
        measure: '`bash_kill` call -> the whole task gone, p95',
        d,
        pct: 'p95',
        what: 'kills',
        target: 'p95 <= 250 ms',
        holds: d.p95 <= 250,
        gateSlack: 1,
      }),
    );
  });

  it(`bursts of ${SIZES.burst} from ${CALLERS} callers, idle tasks, server cost and a worker restart`, async () => {
    const metricsOk = await scrape(server.metricsUrl).then(hasCostSeries, (err: unknown) => {
      notes.push(`no server metrics at ${server.metricsUrl}: ${String(err)}`);
      return false;
    });
    if (!metricsOk) notes.push(`${server.metricsUrl} has no service_requests/persistence_requests series`);

    // The latency cases' worker is done: its own calls (scans, sweeps) stay out of the cost windows.
    await worker.crash();
    // Temporal's burst floor, which also stands idle for its server-cost window.
    const floorBurst = await burstFloor(metricsOk);
    // The same with the command run by the floor's activity: what running it costs plain Temporal code.
    const spawnFloor = await burstFloor(false, 'sleep 600');

    // durable-bash's burst on a worker of its own (a heap never shrinks: memory is measured fresh).
    const queue = `bench-scale-${randomUUID()}`;
    const dir = spillDir();
    let scaleWorker = await startWorker(server, queue, dir);
    await sleep(2_000);
    const idleBytes = scaleWorker.rssBytes();
    const scaleTools = toolsFor(queue);
    const records = new StartedRecords(dir);
    let peakBytes = idleBytes;
    const sampler = setInterval(() => {
      peakBytes = Math.max(peakBytes, scaleWorker.rssBytes() || 0);
    }, 100);
    const ids: string[] = [];
    const start = performance.now();
    const cpuSpan = new CpuSpan(scaleWorker.child.pid);
    const programs = new CpuByProgram();
    let returnedMs = Number.NaN;
    let runningMs = Number.NaN;
    const callers = inLanes(
      Array.from({ length: SIZES.burst }, (_, i) => i),
      CALLERS,
      async () => {
        ids.push(await startBackground(scaleTools, 'sleep 600'));
      },
    ).then(() => {
      returnedMs = performance.now() - start;
    });
    await waitFor(() => records.count() >= SIZES.burst, BURST_DEADLINE_MS, 200).then(
      () => {
        runningMs = performance.now() - start;
      },
      () => notes.push(`durable-bash burst: ${records.count()} of ${SIZES.burst} running at the deadline`),
    );
    const cpu = cpuSpan.end();
    const byProgram = programs.end();
    await callers;
    log(
      `durable-bash burst: ids in ${seconds(returnedMs)}, all running in ${seconds(runningMs)} (floor ${seconds(floorBurst.runningMs)})`,
    );
    const multiple = ratioOr(runningMs, floorBurst.runningMs);
    figures.push({
      id: 'burst.running',
      measure: `burst of ${SIZES.burst} background \`sleep\` tasks from ${CALLERS} callers: all running`,
      raw: `${seconds(runningMs)} (the tools returned every id in ${seconds(returnedMs)}); Temporal's burst floor ${seconds(floorBurst.runningMs)} (every start returned in ${seconds(floorBurst.returnedMs)})`,
      value: runningMs,
      unit: 'ms',
      ratio: multiple,
      ratioText: `${fixed(multiple)} x burst floor`,
      target: '<= 1.25 x burst floor',
      holds: multiple !== null && multiple <= 1.25,
      gateSlack: 1,
    });
    // Where the burst's time went: on 2 cores shared with the server, a burst is as fast as the CPU
    // each start takes, everywhere it is spent.
    const floorCpu = floorBurst.cpu;
    const capacity = os.cpus().length;
    const busy = (c: { machine: number; wallSeconds: number }) =>
      `${c.machine.toFixed(1)} s of ${(c.wallSeconds * capacity).toFixed(1)} s (${((100 * c.machine) / (c.wallSeconds * capacity)).toFixed(0)} % of ${capacity} cores)`;
    const perTask = (s: number) => `${((1000 * s) / SIZES.burst).toFixed(1)} ms`;
    figures.push({
      id: 'burst.cpu',
      measure: `burst of ${SIZES.burst}: CPU from the first start until all run, per task (the machine's, over every process)`,
      raw: `${perTask(cpu.machine)} a task: machine ${busy(cpu)}; the worker process ${cpu.other.toFixed(1)} s, the callers' process ${cpu.self.toFixed(1)} s, the rest (server, nursery, supervisors, bash) ${(cpu.machine - cpu.other - cpu.self).toFixed(1)} s; by program, ms a task: ${programsPerTask(byProgram, SIZES.burst)}. Floor: ${perTask(floorCpu.machine)} a task: machine ${busy(floorCpu)}; the callers' and its worker's process ${floorCpu.self.toFixed(1)} s, the rest (server) ${(floorCpu.machine - floorCpu.self).toFixed(1)} s; by program, ms a task: ${programsPerTask(floorBurst.programs, SIZES.burst)}`,
      value: (1000 * cpu.machine) / SIZES.burst,
      unit: 'ms',
      ratio: ratioOr(cpu.machine, floorCpu.machine),
      ratioText: `${fixed(ratioOr(cpu.machine, floorCpu.machine))} x the floor's CPU`,
      target: '',
      holds: null,
    });
    figures.push({
      id: 'burst.running.spawnFloor',
      measure: `burst of ${SIZES.burst}: all running, against Temporal's burst floor with the command run (each activity spawns \`bash -c 'sleep 600'\` with Node.js)`,
      raw: `${seconds(runningMs)} and ${perTask(cpu.machine)} of CPU a task; that floor ${seconds(spawnFloor.runningMs)} and ${perTask(spawnFloor.cpu.machine)} a task (by program, ms a task: ${programsPerTask(spawnFloor.programs, SIZES.burst)}): its CPU ${fixed(ratioOr(spawnFloor.cpu.machine, floorCpu.machine))} x the plain floor's`,
      value: runningMs,
      unit: 'ms',
      ratio: ratioOr(runningMs, spawnFloor.runningMs),
      ratioText: `${fixed(ratioOr(runningMs, spawnFloor.runningMs))} x that floor; CPU ${fixed(ratioOr(cpu.machine, spawnFloor.cpu.machine))} x`,
      // Issue 31's burst targets, put against plain Temporal code that runs the same command: the
      // plain floor runs no process, so no run of the command can come within 1.25 x of it here
      // (docs/PERFORMANCE.md, "A burst of background starts").
      target: '<= 1.25 x that floor, CPU <= 1.5 x',
      holds: withinSpawnFloor(runningMs, cpu.machine, spawnFloor),
    });

    // Idle: memory, then what the idle tasks cost the server.
    await sleep(SIZES.steadyMs);
    clearInterval(sampler);
    const supervisors = supervisorsOf(dir);
    const growth = Math.max(peakBytes, scaleWorker.rssBytes()) - idleBytes;
    const perTaskBytes = (growth + supervisors.pssBytes) / SIZES.burst;
    figures.push({
      id: 'idle.memoryPerTask',
      measure: `${SIZES.burst} idle background tasks: worker growth + supervisors' PSS, per task`,
      raw: `${mib(growth + supervisors.pssBytes)} = worker growth ${mib(growth)} (peak ${mib(peakBytes)}, idle worker ${mib(idleBytes)}) + ${supervisors.count} supervisors' PSS ${mib(supervisors.pssBytes)} (${(supervisors.pssBytes / Math.max(1, supervisors.count) / 1024).toFixed(0)} KiB each${supervisors.launchers > 0 ? `, with their ${supervisors.launchers} launcher processes: the launcher and the inner supervisor` : ''})`,
      value: perTaskBytes / 1000,
      unit: 'KB',
      ratio: perTaskBytes / 500_000,
      ratioText: `${fixed(perTaskBytes / 500_000)} x target`,
      target: '<= 500 KB per task',
      holds: perTaskBytes <= 500_000,
      gateSlack: 0.5,
    });
    extra.idleScaleWorkerRssBytes = idleBytes;
    if (metricsOk) {
      const idle = await costWindow(SIZES.burst);
      costFigures('idle', `an idle task (\`sleep 600\`, ${SIZES.burst} of them)`, idle, floorBurst.cost);
    }

    // A worker SIGKILLed under them, started again: every task readable and killable.
    await scaleWorker.crash();
    const restartedAt = performance.now();
    const restartedAtWallMs = Date.now();
    scaleWorker = await startWorker(server, queue, dir);
    const pollingMs = performance.now() - restartedAt;
    const step = Math.max(1, Math.floor(ids.length / SIZES.restartSample));
    const sample = ids.filter((_, i) => i % step === 0).slice(0, SIZES.restartSample);
    const readableMs = new Map<string, number>();
    while (readableMs.size < sample.length && performance.now() - restartedAt < RESTART_DEADLINE_MS) {
      await inLanes(
        sample.filter((id) => !readableMs.has(id)),
        CALLERS,
        async (taskId) => {
          const result = await scaleTools.bash_output.execute({ task_id: taskId });
          if (!result.isError && !text(result).includes(UNAVAILABLE))
            readableMs.set(taskId, performance.now() - restartedAt);
        },
      );
    }
    const victim = sample[0] as string;
    const victimRecord = records.of(victim);
    const killStart = performance.now();
    const killAnswer = text(await scaleTools.bash_kill.execute({ task_id: victim }));
    await waitFor(() => !victimRecord || !alive(victimRecord.supervisorPid), 10_000, 5).catch(
      () => undefined,
    );
    const killMs = performance.now() - killStart;
    const killed = killAnswer.includes('killed') && !!victimRecord && !alive(victimRecord.supervisorPid);
    // Every command's re-attach, seen on the host: each attempt writes its `.attempt` file first.
    const reattached = attemptsSince(dir, restartedAtWallMs);
    const allReadable = readableMs.size === sample.length;
    const reattachMs = allReadable ? Math.max(...readableMs.values()) : Number.NaN;
    log(
      `restart: polling after ${seconds(pollingMs)}, ${readableMs.size}/${sample.length} readable after ${seconds(reattachMs)}, kill ${killed ? 'ok' : 'FAILED'} in ${ms(killMs)}`,
    );
    figures.push({
      id: 'restart.reattach',
      measure: `a worker SIGKILLed under ${SIZES.burst} running tasks and started again: ${sample.length} of them (every ${step}th) readable, one killed`,
      raw: `${readableMs.size}/${sample.length} readable (no \`${UNAVAILABLE}\`) ${seconds(reattachMs)} after the restart began (the new worker polled after ${seconds(pollingMs)}; ${reattached.length}/${ids.length} attempts re-attached on the host, half by ${seconds(reattached[Math.floor(reattached.length / 2)] ?? Number.NaN)}, the last at ${seconds(reattached.at(-1) ?? Number.NaN)}); \`bash_kill\` of one: ${killed ? 'gone' : `NOT gone (${killAnswer.slice(0, 80)})`} in ${ms(killMs)}`,
      value: reattachMs,
      unit: 'ms',
      ratio: reattachMs / 30_000,
      ratioText: `${fixed(reattachMs / 30_000)} x target`,
      target: 'all readable and killable within 30 s',
      holds: allReadable && killed && reattachMs <= 30_000,
      gateSlack: 0.5,
    });

    const goneStart = performance.now();
    await cancelAll(server.client, ids);
    await waitFor(() => supervisorsOf(dir).count === 0, BURST_DEADLINE_MS, 500).catch(() =>
      notes.push(`${supervisorsOf(dir).count} supervisors left after the kills`),
    );
    const goneMs = performance.now() - goneStart;
    log(`all ${ids.length} gone ${seconds(goneMs)} after the kills began`);
    figures.push({
      id: 'burst.gone',
      measure: `the ${SIZES.burst} tasks cancelled (50 at a time): all gone`,
      raw: `${seconds(goneMs)} after the first cancel`,
      value: goneMs,
      unit: 'ms',
      ratio: ratioOr(goneMs, floorBurst.runningMs),
      ratioText: `${fixed(ratioOr(goneMs, floorBurst.runningMs))} x burst floor`,
      target: '',
      holds: null,
    });

    // A chatty task: 10 lines a second, no reader.
    if (metricsOk) {
      const chattyIds: string[] = [];
      for (let i = 0; i < SIZES.chatty; i++)
        chattyIds.push(
          await startBackground(
            scaleTools,
            'i=0; while :; do i=$((i+1)); echo "chatty line $i"; sleep 0.1; done',
          ),
        );
      await sleep(SIZES.steadyMs);
      const chatty = await costWindow(SIZES.chatty);
      costFigures(
        'chatty',
        `a chatty task (10 lines a second, no reader; ${SIZES.chatty} of them)`,
        chatty,
        floorBurst.cost,
      );
      await cancelAll(server.client, chattyIds);
      await waitFor(() => supervisorsOf(dir).count === 0, 60_000, 500).catch(() => undefined);
    }
    await scaleWorker.crash();
  });

  it('one task printing a lot', async () => {
    const bytes = SIZES.printBytes;
    const command = `yes 'durable-bash benchmark line' | head -c ${bytes}`;
    const queue = `bench-print-${randomUUID()}`;
    const fresh = await startWorker(server, queue, spillDir());
    const idle = await idleRssOf(fresh);
    const idleBytes = idle.bytes;
    let peakBytes = idleBytes;
    const sampler = setInterval(() => {
      peakBytes = Math.max(peakBytes, fresh.rssBytes() || 0);
    }, 100);
    let taskId: string;
    try {
      taskId = await startBackground(toolsFor(queue), command);
      await server.client.workflow.getHandle(taskId).result();
    } finally {
      clearInterval(sampler);
      await fresh.crash();
    }
    const handle = server.client.workflow.getHandle(taskId);
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
    const exact = actual === expected && result.stdout.bytes === bytes;
    const size = bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : `${bytes / 1024 ** 2} MiB`;
    log(`printing ${size}: worker peak ${mib(peakBytes)}, history ${historyBytes} B, exact ${exact}`);
    figures.push({
      id: 'print.rss',
      measure: `one task printing ${size}: worker RSS peak`,
      raw: `worker RSS peak ${mib(peakBytes)}, idle worker ${idleText(idle)}; history ${(historyBytes / 1024).toFixed(0)} KiB in ${info?.historyLength} events; spill file ${exact ? 'byte-exact (sha256)' : 'NOT byte-exact'}`,
      value: peakBytes / 1e6,
      unit: 'MB',
      ratio: peakBytes / 200e6,
      ratioText: `${fixed(peakBytes / 200e6)} x target`,
      target: 'RSS <= 200 MB, history <= 5 MB, byte-exact',
      holds: peakBytes <= 200e6 && historyBytes <= 5e6 && exact,
      gateSlack: 0.5,
    });
  });
});

/**
 * Reads `taskId` with `bash_output` (waiting `waitMs` each time) until `count` lines of
 * `date +%s%N` came back, or the task ended; each line's latency is from its timestamp to the
 * answer that held it. (`date` writes its line in one write, so an answer never splits one.)
 */
async function readTimestamps(taskId: string, count: number, waitMs: number): Promise<number[]> {
  const latencies: number[] = [];
  const deadline = Date.now() + 60_000;
  while (latencies.length < count && Date.now() < deadline) {
    const answer = text(
      await tools.bash_output.execute({ task_id: taskId, ...(waitMs > 0 ? { wait_ms: waitMs } : {}) }),
    );
    const now = performance.timeOrigin + performance.now();
    for (const line of answer.split('\n'))
      if (/^\d{19}$/.test(line)) latencies.push(now - Number(line) / 1e6);
    if (/\[status: (?!running)/.test(answer)) break; // Ended: nothing more will come.
  }
  if (latencies.length < count)
    notes.push(
      `task ${taskId}: only ${latencies.length} of its ${count} lines came back through bash_output`,
    );
  return latencies;
}

interface BurstFloor {
  runningMs: number;
  returnedMs: number;
  cost: PerTaskCost | undefined;
  cpu: ReturnType<CpuSpan['end']>;
  programs: ReturnType<CpuByProgram['end']>;
}

/**
 * Temporal's burst floor (bench/lib/floor-burst.ts): N workflows started by 8 callers, each running
 * one activity that heartbeats once a minute until ended. They then stand idle for the floor's
 * server-cost window, and are terminated. With `command`, each activity first spawns `bash -c
 * command` with Node.js and keeps it (the floor with the command run; no window).
 */
async function burstFloor(withMetrics: boolean, command?: string): Promise<BurstFloor> {
  const name = command === undefined ? 'burst floor' : 'burst floor with a spawn';
  const burst = await runFloorBurst(server, workflowBundle, {
    tasks: SIZES.burst,
    callers: CALLERS,
    deadlineMs: BURST_DEADLINE_MS,
    ...(command !== undefined ? { command } : {}),
  });
  try {
    const { runningMs, returnedMs, cpu, programs } = burst;
    if (!Number.isFinite(runningMs))
      notes.push(`${name}: ${burst.running} of ${SIZES.burst} running at the deadline`);
    log(`${name}: starts returned in ${seconds(returnedMs)}, all running in ${seconds(runningMs)}`);
    if (command !== undefined) return { runningMs, returnedMs, cost: undefined, cpu, programs };
    extra.burstFloor = { runningMs, returnedMs };
    await sleep(SIZES.steadyMs); // As durable-bash's tasks get before their window.
    const cost = withMetrics ? await costWindow(SIZES.burst) : undefined;
    if (cost) {
      log(
        `floor cost per task per minute: ${fixed(cost.heartbeats)} heartbeats, ${fixed(cost.updateWrites)} writes, ${fixed(cost.frontendCalls)} calls`,
      );
    }
    return { runningMs, returnedMs, cost, cpu, programs };
  } finally {
    await burst.end();
  }
}

interface PerTaskCost {
  heartbeats: number;
  updateWrites: number;
  frontendCalls: number;
  windowMs: number;
  tasks: number;
  counts: CostCounters;
}

/**
 * The server's counters over one window with `tasks` tasks standing, per task per minute. An idle
 * activity makes two kinds of write: its heartbeats (every C) and the server's heartbeat-timer
 * firings (every floor(T / C) x C for a heartbeat timeout T, the first T after the attempt started:
 * docs/TEMPORAL-NOTES.md). A full run's window spans whole periods of both for durable-bash (C 120 s,
 * T 300 s: 240 s) and for the floor (C 60 s, T 150 s: 120 s), and opens `steadyMs` (65 s) after the
 * last task started running, past T - 240 s, so every task has had its first firing or has it inside.
 */
async function costWindow(tasks: number): Promise<PerTaskCost> {
  const before = costCounters(await scrape(server.metricsUrl), server.namespace);
  const start = performance.now();
  await sleep(SIZES.windowMs);
  const after = costCounters(await scrape(server.metricsUrl), server.namespace);
  const windowMs = performance.now() - start;
  const counts = subtract(after, before);
  const per = (n: number) => n / tasks / (windowMs / 60_000);
  return {
    heartbeats: per(counts.heartbeats),
    updateWrites: per(counts.updateWrites),
    frontendCalls: per(counts.frontendCalls),
    windowMs,
    tasks,
    counts,
  };
}

/** The server-cost figures of one kind of task, against the burst floor's idle activities. */
function costFigures(kind: string, what: string, cost: PerTaskCost, floor: PerTaskCost | undefined): void {
  // A window shorter than the heartbeat interval sees each task heartbeat once or not at all.
  const judged = cost.windowMs >= HEARTBEAT_INTERVAL_MS;
  if (!judged)
    notes.push(
      `server cost (${kind}): a ${seconds(cost.windowMs)} window is shorter than the ${seconds(HEARTBEAT_INTERVAL_MS)} heartbeat interval: a gross-regression check, not judged`,
    );
  const raw = (n: number, floorValue: number | undefined) =>
    `${fixed(n)} /task/min over ${seconds(cost.windowMs)} with ${cost.tasks} tasks; Temporal floor ${fixed(floorValue ?? Number.NaN)} /task/min`;
  const entries: [string, string, number, number | undefined, number | undefined][] = [
    ['heartbeats', 'RecordActivityTaskHeartbeat calls', cost.heartbeats, floor?.heartbeats, 1],
    ['writes', 'persistence UpdateWorkflowExecution writes', cost.updateWrites, floor?.updateWrites, 1],
    [
      'calls',
      'frontend calls (every operation but long polls)',
      cost.frontendCalls,
      floor?.frontendCalls,
      undefined,
    ],
  ];
  for (const [key, label, value, floorValue, limit] of entries) {
    const multiple = floorValue !== undefined ? ratioOr(value, floorValue) : null;
    figures.push({
      id: `cost.${kind}.${key}`,
      measure: `server cost of ${what}: ${label}`,
      raw: raw(value, floorValue),
      value,
      unit: '/task/min',
      ratio: multiple,
      ratioText: `${fixed(multiple)} x floor`,
      target:
        limit === undefined
          ? ''
          : `<= ${limit} /task/min${kind === 'chatty' ? ' (no reader asks for more)' : ''}`,
      // 5 % for the window's edges: a task heartbeating once a minute may show twice in 61 s.
      holds: limit === undefined || !judged ? null : value <= limit * 1.05,
      // Gated on the figure itself (per task per minute): the floor's own count may be 0 in a short window.
      gateOn: 'value',
      gateSlack: 3,
    });
  }
  extra[`cost.${kind}`] = cost;
  if (floor) extra['cost.floor'] = floor;
}

/** Whether a burst held issue 31's targets against the floor that runs the command: time and CPU. */
function withinSpawnFloor(runningMs: number, cpuSeconds: number, floor: BurstFloor): boolean | null {
  const time = ratioOr(runningMs, floor.runningMs);
  const cpu = ratioOr(cpuSeconds, floor.cpu.machine);
  if (time === null || cpu === null || !Number.isFinite(time)) return null;
  return time <= 1.25 && cpu <= 1.5;
}
