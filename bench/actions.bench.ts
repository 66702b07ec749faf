/**
 * What each operation costs the Temporal server, counted by its own `action` counter (what
 * Temporal Cloud bills), by type, beside Temporal's own floor for the same work measured in the
 * same run on the same server (bench/floor/):
 * - a foreground `bash` of `true`, against a workflow running one activity (roundTripFloor);
 * - a background task started and ended with nobody reading it, against the same;
 * - a `bash_output` read of a task that printed since the last read, and of one that did not,
 *   against an update whose handler runs one activity (updateFloor); the task's first read, which
 *   starts its reader workflow, is left out;
 * - `bash_kill` of a running task, to its end, against the cancellation of a workflow whose one
 *   activity heartbeats until cancelled (burstFloor): Temporal bills that cancellation nothing.
 * Each is counted from before the call to a settled server after it, once per sample; the figure is
 * the most any sample cost (an action more in one sample is a real one), gated exactly in the quick
 * bench. The command worker is a `durable-bash worker` process; no agent host takes notices.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import type { Tool } from '../src/shared/tool-types.js';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import type { WorkerProcess } from '../test/helpers/worker-process.js';
import { type Figure, fixed, runServer, seconds, writeRunJson } from './lib/figures.js';
import { bundleFloorWorkflows, startFloorWorker } from './lib/floor-worker.js';
import { endBenchTasks, sleep, startBackground, startWorker, text } from './lib/host.js';
import { type ActionCost, actionsOf, actionTypes } from './lib/metrics.js';
import { type BenchServer, type ServerKind, startBenchServer } from './lib/server.js';

const QUICK = process.env.BENCH_MODE === 'quick';
const SERVER = (process.env.BENCH_SERVER ?? 'memory') as ServerKind;
const OUT = process.env.BENCH_OUT;
const SAMPLES = QUICK ? 3 : 10;
/**
 * Time the server is given after an operation returns for what follows from it (a workflow's last
 * task, a heartbeat on its way) to be counted with it: well past a workflow task's round trip.
 */
const SETTLE_MS = 1_500;

const began = performance.now();
const log = (message: string) =>
  console.log(`[bench actions ${seconds(performance.now() - began).padStart(7)}] ${message}`);

const figures: Figure[] = [];
const notes: string[] = [];
let server: BenchServer;
let worker: WorkerProcess;
let spillDir: string;
let floorWorker: Worker;
let floorRunning: Promise<void>;
const taskQueue = `bench-actions-${randomUUID()}`;
const floorQueue = `bench-actions-floor-${randomUUID()}`;
let tools: Record<'bash' | 'bash_output' | 'bash_kill', Tool>;

/** The actions `body` causes, once the server has settled after it. */
const costOf = (body: () => Promise<unknown>, settleMs = SETTLE_MS) => actionsOf(server, body, settleMs);

/** The costliest sample (its types), and the spread. */
function summary(costs: ActionCost[]): { max: ActionCost; text: string } {
  const max = costs.reduce((most, cost) => (cost.total > most.total ? cost : most));
  const totals = costs.map((cost) => cost.total);
  return {
    max,
    text: `${max.total} (${actionTypes(max.byType)}); ${costs.length} samples ${Math.min(...totals)}-${Math.max(...totals)}`,
  };
}

/** One operation's figure: its costliest sample against the floor's, gated exactly. */
function record(
  id: string,
  measure: string,
  costs: ActionCost[],
  floors: ActionCost[],
  target: number,
  why: string,
) {
  const it = summary(costs);
  const floor = summary(floors);
  log(`${measure}: ${it.text}; floor ${floor.text}`);
  figures.push({
    id: `actions.${id}`,
    measure,
    raw: `${it.text}; floor ${floor.text}`,
    value: it.max.total,
    unit: 'actions',
    ratio: floor.max.total > 0 ? it.max.total / floor.max.total : null,
    ratioText: `${fixed(floor.max.total > 0 ? it.max.total / floor.max.total : Number.NaN)} x floor`,
    target: `at most ${target} (${why})`,
    holds: it.max.total <= target,
    gateOn: 'value',
    gateSlack: 0,
    gateExact: true,
  });
}

async function samples(body: () => Promise<ActionCost>): Promise<ActionCost[]> {
  const costs: ActionCost[] = [];
  for (let i = 0; i < SAMPLES; i++) costs.push(await body());
  return costs;
}

// A case that failed part-way must not leave its actions to be counted in the next one's.
afterEach(() => sleep(SETTLE_MS));

beforeAll(async () => {
  server = await startBenchServer(SERVER);
  log(`${server.description} at ${server.address}, Temporal ${server.version}`);
  spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bench-actions-'));
  worker = await startWorker(server, taskQueue, spillDir);
  ({ worker: floorWorker, running: floorRunning } = await startFloorWorker(
    server,
    floorQueue,
    await bundleFloorWorkflows(),
  ));
  const list = createBashTools({
    client: server.client,
    namespace: server.namespace,
    taskQueue,
    maxBackgroundTasksPerSession: Number.POSITIVE_INFINITY,
  });
  const toolOf = (name: string) => {
    const found = list.find((tool) => tool.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  tools = { bash: toolOf('bash'), bash_output: toolOf('bash_output'), bash_kill: toolOf('bash_kill') };
  // A warm worker: its first run pays for its workflow sandbox and connections.
  await tools.bash.execute({ command: 'true', description: 'Warm up' });
  await sleep(2_000);
}, 300_000);

afterAll(async () => {
  try {
    floorWorker?.shutdown();
    await floorRunning;
    await worker?.crash();
    await server?.stop();
  } finally {
    endBenchTasks(spillDir, notes);
    writeRunJson(OUT, {
      server: runServer(server, 'actions per operation'),
      mode: QUICK ? 'quick' : 'full',
      sizes: { samples: SAMPLES },
      durationMs: performance.now() - began,
      figures,
      notes,
    });
  }
}, 120_000);

const roundTripFloor = () =>
  samples(() =>
    costOf(() =>
      server.client.workflow.execute('roundTripFloor', {
        workflowId: `floor-round-trip-${randomUUID()}`,
        taskQueue: floorQueue,
      }),
    ),
  );

describe('what each operation costs the server, in actions', () => {
  it('a foreground run of true', async () => {
    const costs = await samples(() =>
      costOf(async () => {
        const result = await tools.bash.execute({ command: 'true', description: 'True' });
        if (result.isError) throw new Error(`bash true: ${text(result)}`);
      }),
    );
    record('foreground', 'a foreground `bash` of `true`', costs, await roundTripFloor(), 3, 'issue 31');
  });

  it('a background task started and ended, nobody reading', async () => {
    const costs = await samples(() =>
      costOf(async () => {
        const taskId = await startBackground(tools, 'sleep 1');
        await server.client.workflow.getHandle(taskId).result();
      }),
    );
    record(
      'backgroundUnread',
      'a background task (`sleep 1`) started and ended, nobody reading, no notice',
      costs,
      await roundTripFloor(),
      4,
      'issue 31',
    );
  });

  it('reads of a running task, with new output and with none, and its kill', async () => {
    const firsts: ActionCost[] = [];
    const moved: ActionCost[] = [];
    const still: ActionCost[] = [];
    const kills: ActionCost[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const taskId = await startBackground(tools, 'echo ready; sleep 4; echo more; sleep 600');
      // Printed, attached and heartbeated: the task's own start has settled.
      for (let tries = 0; ; tries++) {
        await sleep(500);
        const peeked = await server.client.workflow.getHandle(taskId).describe();
        if (peeked.status.name === 'RUNNING' && tries >= 3) break;
        if (tries > 40) throw new Error(`task ${taskId} did not settle`);
      }
      const read = () => tools.bash_output.execute({ task_id: taskId }).then(text);
      // The first read starts the task's reader workflow: a task's one-time cost, not a read's.
      firsts.push(
        await costOf(async () => {
          const first = await read();
          if (!first.startsWith('ready')) throw new Error(`first read: ${first}`);
        }),
      );
      await sleep(4_000);
      moved.push(
        await costOf(async () => {
          const answer = await read();
          if (!answer.startsWith('more')) throw new Error(`second read: ${answer}`);
        }),
      );
      still.push(
        await costOf(async () => {
          const answer = await read();
          if (!answer.startsWith('(no new output)')) throw new Error(`third read: ${answer}`);
        }),
      );
      kills.push(
        await costOf(async () => {
          await tools.bash_kill.execute({ task_id: taskId });
          await server.client.workflow
            .getHandle(taskId)
            .result()
            .catch(() => undefined);
        }, 3_000),
      );
    }
    const floorId = `floor-update-${randomUUID()}`;
    const handle = await server.client.workflow.start('updateFloor', {
      workflowId: floorId,
      taskQueue: floorQueue,
    });
    await sleep(1_000);
    const updates = await samples(() => costOf(() => handle.executeUpdate('read')));
    await handle.terminate();
    // A first read's floor: Temporal's update-with-start of a workflow whose update runs an activity.
    const startingUpdates = await samples(async () => {
      const id = `floor-update-start-${randomUUID()}`;
      const cost = await costOf(() =>
        server.client.workflow.executeUpdateWithStart('read', {
          startWorkflowOperation: new WithStartWorkflowOperation('updateFloor', {
            workflowId: id,
            taskQueue: floorQueue,
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      );
      await server.client.workflow.getHandle(id).terminate();
      return cost;
    });
    record(
      'readFirst',
      "a task's first `bash_output` read, which starts its reader",
      firsts,
      startingUpdates,
      7,
      "the floor's 3, the reader's signal to its task and its probe timer, its patch's marker and upsert",
    );
    record(
      'readMoved',
      'a `bash_output` read of a task that printed since the last read',
      moved,
      updates,
      2,
      'issue 31',
    );
    record(
      'readStill',
      'a `bash_output` read of a task that printed nothing since',
      still,
      updates,
      1,
      'issue 31',
    );
    const cancels = await samples(async () => {
      const id = `floor-cancel-${randomUUID()}`;
      const started = await server.client.workflow.start('burstFloor', {
        workflowId: id,
        taskQueue: floorQueue,
      });
      await sleep(1_500);
      return costOf(async () => {
        await started.cancel();
        await started.result().catch(() => undefined);
      }, 3_000);
    });
    record('kill', '`bash_kill` of a task read before, to its end', kills, cancels, 4, 'issue 31');
  });
});
