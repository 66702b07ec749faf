/**
 * Where a foreground run's time goes (`npm run bench:phases`): foreground `bash` of `true` through
 * the tools over a plain `Connection` client, with a command worker in the same process (what a
 * user's agent host has), interleaved with Temporal's round-trip floor on the same server and with
 * that floor paying a run's three guarantees (`guardedRoundTripFloor`), then each run's history cut
 * into phases by its events' server times. Prints one table of medians; the
 * figures docs/PERFORMANCE.md quotes for each step taken come from it.
 *
 * BENCH_SERVER (memory | file), PHASES_SAMPLES (default 200), PHASES_EAGER_START=1 (the tools'
 * `eagerStart` over the worker's NativeConnection), PHASES_WORKER=cli (the command worker a
 * `durable-bash worker` process, as the full bench runs it, not in this process),
 * PHASES_BASELINE_BUNDLE=<a workflow bundle.js> (an A/B of a workflow change: a second in-process
 * worker runs that bundle, another tree's `dist/workflows/bundle.js`, on a queue of its own, its
 * runs interleaved with the others), PHASES_BASELINE_CLI=<a dist/cli/main.js> (an A/B of a change
 * to the host's code, with PHASES_WORKER=cli: a second `durable-bash worker` process from that
 * tree, on a queue and spill directory of its own, its runs interleaved with the others).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, inject, it } from 'vitest';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import { type BashWorker, createBashWorker } from '../src/worker/bash-worker.js';
import { bundlerOptions } from '../src/worker/workflow-bundle.js';
import { TEST_WORKDIR_ROOTS } from '../test/helpers/workdir-roots.js';
import type { WorkerProcess } from '../test/helpers/worker-process.js';
import { heartbeatOnce, resolveTrivially, trivial } from './floor/activities.js';
import { dist, ms } from './lib/figures.js';
import { directSpawn, startWorker, type Tools, timed } from './lib/host.js';
import { type BenchServer, type ServerKind, startBenchServer } from './lib/server.js';

const SERVER = (process.env.BENCH_SERVER ?? 'memory') as ServerKind;
const SAMPLES = Number(process.env.PHASES_SAMPLES ?? 200);
const EAGER_START = process.env.PHASES_EAGER_START === '1';
const CLI_WORKER = process.env.PHASES_WORKER === 'cli';
const BASELINE_BUNDLE = process.env.PHASES_BASELINE_BUNDLE;
const BASELINE_CLI = process.env.PHASES_BASELINE_CLI;

let server: BenchServer;
let bashWorker: BashWorker | undefined;
let baselineWorker: BashWorker | undefined;
let baselineTools: Tools | undefined;
let cliWorker: WorkerProcess | undefined;
let baselineCliWorker: WorkerProcess | undefined;
let floorWorker: Worker;
let running: Promise<unknown>[] = [];
let tools: Tools;
let spillDir: string;
const taskQueue = `phases-${randomUUID()}`;
const floorQueue = `phases-floor-${randomUUID()}`;
const baselineQueue = `phases-baseline-${randomUUID()}`;

beforeAll(async () => {
  server = await startBenchServer(SERVER);
  spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-phases-'));
  if (CLI_WORKER) cliWorker = await startWorker(server, taskQueue, spillDir);
  else
    bashWorker = await createBashWorker({
      connection: server.nativeConnection,
      namespace: server.namespace,
      taskQueue,
      executor: {
        spillDir,
        // The checkout handed to sessions, as dev hands its cwd (the chain users run).
        workdirRoots: TEST_WORKDIR_ROOTS,
        ...(process.env.PHASES_CONTAINMENT === 'process-tree'
          ? { containment: 'process-tree' as const }
          : {}),
      },
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
  floorWorker = await Worker.create({
    connection: server.nativeConnection,
    namespace: server.namespace,
    taskQueue: floorQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./floor/workflows.ts', import.meta.url)),
      ...bundlerOptions,
      logger: new DefaultLogger('WARN'),
    }),
    activities: { trivial, resolveTrivially, heartbeatOnce },
  });
  if (BASELINE_CLI !== undefined) {
    if (!CLI_WORKER) throw new Error('PHASES_BASELINE_CLI needs PHASES_WORKER=cli');
    baselineCliWorker = await startWorker(
      server,
      baselineQueue,
      `${spillDir}-baseline`,
      path.resolve(BASELINE_CLI),
    );
  }
  if (BASELINE_BUNDLE !== undefined)
    baselineWorker = await createBashWorker({
      connection: server.nativeConnection,
      namespace: server.namespace,
      taskQueue: baselineQueue,
      // A spill directory of its own: a host of its own (the host id comes from it).
      executor: { spillDir: `${spillDir}-baseline`, workdirRoots: TEST_WORKDIR_ROOTS },
      workflowBundle: { codePath: path.resolve(BASELINE_BUNDLE) },
    });
  running = [
    floorWorker.run(),
    ...[bashWorker, baselineWorker].flatMap((worker) => (worker ? [worker.run()] : [])),
  ];
  const client = EAGER_START
    ? new Client({ connection: server.nativeConnection, namespace: server.namespace })
    : server.client;
  tools = Object.fromEntries(
    createBashTools({ client, taskQueue, ...(EAGER_START ? { eagerStart: true } : {}) }).map((tool) => [
      tool.name,
      tool,
    ]),
  ) as Tools;
  if (baselineWorker || baselineCliWorker)
    baselineTools = Object.fromEntries(
      createBashTools({ client, taskQueue: baselineQueue }).map((tool) => [tool.name, tool]),
    ) as Tools;
}, 300_000);

afterAll(async () => {
  bashWorker?.shutdown();
  baselineWorker?.shutdown();
  floorWorker?.shutdown();
  for (const worker of [cliWorker, baselineCliWorker]) {
    if (!worker) continue;
    worker.child.kill('SIGTERM');
    await once(worker.child, 'exit');
  }
  await Promise.all(running);
  await server?.stop();
  rmSync(spillDir, { recursive: true, force: true });
  rmSync(`${spillDir}-baseline`, { recursive: true, force: true });
}, 120_000);

type Event = temporal.api.history.v1.IHistoryEvent;

/** The events a phase starts with, by their attributes' field; `wft` is numbered per workflow task. */
const PHASES: [keyof Event, string][] = [
  ['workflowTaskScheduledEventAttributes', 'wft scheduled'],
  ['workflowTaskStartedEventAttributes', 'wft started'],
  ['workflowTaskCompletedEventAttributes', 'wft completed'],
  ['activityTaskScheduledEventAttributes', 'activity scheduled'],
  ['activityTaskStartedEventAttributes', 'activity started'],
  ['activityTaskCompletedEventAttributes', 'activity completed'],
  ['workflowExecutionCompletedEventAttributes', 'workflow completed'],
];

/** Milliseconds from the run's start to each of its events, by event type name (first and last seen). */
async function phasesOf(workflowId: string): Promise<Record<string, number>> {
  const history = await server.client.workflow.getHandle(workflowId).fetchHistory();
  const events = (history.events ?? []) as Event[];
  const t0 = tsToMs(events[0]?.eventTime);
  const at: Record<string, number> = {};
  let wft = 0;
  for (const event of events) {
    if (event.workflowTaskScheduledEventAttributes) wft++;
    const key = PHASES.find(([attributes]) => event[attributes])?.[1].replace('wft', `wft${wft}`);
    if (key !== undefined && at[key] === undefined) at[key] = tsToMs(event.eventTime) - t0;
  }
  return at;
}

it('foreground bash of true: where the time goes', async () => {
  const floorIds: string[] = [];
  const guardedIds: string[] = [];
  const spawnMs: number[] = [];
  const floorMs: number[] = [];
  const guardedMs: number[] = [];
  const toolMs: number[] = [];
  const roundTrip = async () => {
    const workflowId = `floor-${randomUUID()}`;
    floorIds.push(workflowId);
    await server.client.workflow.execute('roundTripFloor', { taskQueue: floorQueue, workflowId });
  };
  const guardedRoundTrip = async () => {
    const workflowId = `guarded-${randomUUID()}`;
    guardedIds.push(workflowId);
    await server.client.workflow.execute('guardedRoundTripFloor', { taskQueue: floorQueue, workflowId });
  };
  const baselineMs: number[] = [];
  const bashWith = (of: Tools) => async () => {
    const result = await of.bash.execute({ command: 'true', description: 'Trivial' });
    if (result.isError) throw new Error(JSON.stringify(result));
  };
  const bash = bashWith(tools);
  const baseline = baselineTools && bashWith(baselineTools);
  for (let i = 0; i < 10; i++) {
    await directSpawn('true');
    await roundTrip();
    await guardedRoundTrip();
    await bash();
    await baseline?.();
  }
  floorIds.length = 0;
  guardedIds.length = 0;
  const steps = [
    async () => spawnMs.push(await timed(() => directSpawn('true'))),
    async () => floorMs.push(await timed(roundTrip)),
    async () => guardedMs.push(await timed(guardedRoundTrip)),
    async () => toolMs.push(await timed(bash)),
    ...(baseline ? [async () => baselineMs.push(await timed(baseline))] : []),
  ];
  for (let i = 0; i < SAMPLES; i++)
    for (let j = 0; j < steps.length; j++) await (steps[(i + j) % steps.length] as () => Promise<number>)();

  // The tool's runs are the bash tasks of its queue; their ids come from a listing.
  const bashTaskIds = async (queue: string) => {
    const ids: string[] = [];
    for await (const info of server.client.workflow.list({
      query: `TaskQueue = '${queue}' AND WorkflowType = 'bashTask'`,
    }))
      ids.push(info.workflowId);
    return ids;
  };
  const toolIds = await bashTaskIds(taskQueue);
  const baselineIds = baseline ? await bashTaskIds(baselineQueue) : [];
  const spawn = dist(spawnMs).p50;
  const floor = dist(floorMs).p50;
  const guarded = dist(guardedMs).p50;
  const tool = dist(toolMs).p50;
  const lines = [
    `server ${SERVER}${EAGER_START ? ', eagerStart' : ''}${CLI_WORKER ? ', a durable-bash worker process' : ''}; ${SAMPLES} samples each; p50s`,
    `spawn ${ms(spawn)}, floor ${ms(floor)}, bash ${ms(tool)}: spawn + ${((tool - spawn) / floor).toFixed(2)} x floor`,
    `the floor with the guarantees ${ms(guarded)} (${(guarded / floor).toFixed(2)} x floor): bash is spawn + ${((tool - spawn) / guarded).toFixed(2)} x it`,
    `p99: floor ${ms(dist(floorMs).p99)}, bash ${ms(dist(toolMs).p99)}: spawn + ${((dist(toolMs).p99 - dist(spawnMs).p99) / dist(floorMs).p99).toFixed(2)} x floor`,
  ];
  if (baseline) {
    const base = dist(baselineMs).p50;
    lines.push(
      `baseline ${ms(base)}: spawn + ${((base - spawn) / guarded).toFixed(2)} x the floor with the guarantees`,
    );
  }
  for (const [name, ids] of [
    ['floor', floorIds.slice(-100)],
    ['floor with the guarantees', guardedIds.slice(-100)],
    ['bash', toolIds.slice(0, 100)],
    ...(baseline ? [['bash, baseline', baselineIds.slice(0, 100)] as const] : []),
  ] as const) {
    const all = await Promise.all(ids.map(phasesOf));
    const keys = [...new Set(all.flatMap((at) => Object.keys(at)))].sort(
      (a, b) => dist(all.map((at) => at[a] ?? 0)).p50 - dist(all.map((at) => at[b] ?? 0)).p50,
    );
    lines.push(`${name} (${ids.length} histories), ms after the start event, p50 (mean):`);
    for (const key of keys) {
      const times = all.flatMap((at) => (at[key] === undefined ? [] : [at[key]]));
      const mean = times.reduce((sum, time) => sum + time, 0) / times.length;
      lines.push(`  ${key.padEnd(22)} ${dist(times).p50.toFixed(1).padStart(6)} (${mean.toFixed(2)})`);
    }
  }
  console.log(lines.join('\n'));
});
