/**
 * What a session's notices cost the Temporal server, counted by its own `action` counter (what
 * Temporal Cloud bills), each against Temporal's own floor for the same delivery measured in the
 * same run on the same server:
 * - a monitored task printing lines that match nothing: no action at all (its floor: 0);
 * - a monitor's notice, one matching line at a time: against a workflow that takes one signal
 *   (signal-with-start) and runs one activity for it (messageFloor);
 * - a reminder that fires: against a workflow that sleeps on one timer, then runs one activity
 *   (timerFloor).
 * The agent host's worker runs in the bench process (the inject activity), the command worker is a
 * `durable-bash worker` process.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../src/shared/tool-types.js';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import { createAgentWorker } from '../src/worker/agent-worker.js';
import { waitFor } from '../test/helpers/processes.js';
import type { WorkerProcess } from '../test/helpers/worker-process.js';
import { type Figure, fixed, runServer, seconds, writeRunJson } from './lib/figures.js';
import { bundleFloorWorkflows, startFloorWorker } from './lib/floor-worker.js';
import { endBenchTasks, sleep, startBackground, startWorker, text } from './lib/host.js';
import { actionsOf, actionTypes } from './lib/metrics.js';
import { type BenchServer, type ServerKind, startBenchServer } from './lib/server.js';

const QUICK = process.env.BENCH_MODE === 'quick';
const SERVER = (process.env.BENCH_SERVER ?? 'memory') as ServerKind;
const OUT = process.env.BENCH_OUT;
const SIZES = QUICK ? { silentLines: 2_000, notices: 5 } : { silentLines: 20_000, notices: 20 };
/** Time between two matching lines: past the monitor's gathering window, so each is a notice. */
const LINE_GAP_S = 2;
const SESSION = 'bench-notices';

const began = performance.now();
const log = (message: string) =>
  console.log(`[bench notices ${seconds(performance.now() - began).padStart(7)}] ${message}`);

const figures: Figure[] = [];
const notes: string[] = [];
let server: BenchServer;
let worker: WorkerProcess;
let spillDir: string;
let floorWorker: Worker;
let floorRunning: Promise<void>;
let agentWorker: Worker;
let agentRunning: Promise<void>;
const taskQueue = `bench-notices-${randomUUID()}`;
const agentTaskQueue = `bench-notices-agent-${randomUUID()}`;
const floorQueue = `bench-notices-floor-${randomUUID()}`;
const injected: string[] = [];
let tools: Record<'bash' | 'bash_kill' | 'bash_remind', Tool>;
const toolOf = (name: string, list: Tool[]) => {
  const found = list.find((tool) => tool.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

/** The actions `body` causes, once the server has settled after it (`settleMs`). */
const costOf = (body: () => Promise<unknown>, settleMs = 1_000) => actionsOf(server, body, settleMs);

beforeAll(async () => {
  server = await startBenchServer(SERVER);
  log(`${server.description} at ${server.address}, Temporal ${server.version}`);
  spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bench-notices-'));
  worker = await startWorker(server, taskQueue, spillDir);
  ({ worker: floorWorker, running: floorRunning } = await startFloorWorker(
    server,
    floorQueue,
    await bundleFloorWorkflows(),
  ));
  agentWorker = await createAgentWorker({
    connection: server.nativeConnection,
    namespace: server.namespace,
    taskQueue: agentTaskQueue,
    agents: {
      inject: async (_sessionId, content) => {
        injected.push(content);
        return true;
      },
    },
  });
  agentRunning = agentWorker.run();
  const list = createBashTools({
    client: server.client,
    namespace: server.namespace,
    taskQueue,
    agentTaskQueue,
  });
  tools = {
    bash: toolOf('bash', list),
    bash_kill: toolOf('bash_kill', list),
    bash_remind: toolOf('bash_remind', list),
  };
  await sleep(2_000);
}, 300_000);

afterAll(async () => {
  try {
    floorWorker?.shutdown();
    agentWorker?.shutdown();
    await Promise.all([floorRunning, agentRunning]);
    await worker?.crash();
    await server?.stop();
  } finally {
    endBenchTasks(spillDir, notes);
    writeRunJson(OUT, {
      server: runServer(server, 'notices (actions)'),
      mode: QUICK ? 'quick' : 'full',
      sizes: SIZES,
      durationMs: performance.now() - began,
      figures,
      notes,
    });
  }
}, 120_000);

const exec = { agent: { sessionId: SESSION } };

const kill = (taskId: string) => tools.bash_kill.execute({ task_id: taskId }, exec);

describe('what notices cost the server', () => {
  it('a monitored task printing lines that match nothing', async () => {
    const n = SIZES.silentLines;
    const taskId = await startBackground(
      tools,
      `sleep 3; seq 1 ${n} | sed 's/^/ok /'; sleep 600`,
      { notify_on: '^ERROR' },
      exec,
    );
    await sleep(2_000); // Started, attached, heartbeated.
    const silent = await costOf(async () => {
      await sleep(4_000);
    });
    await kill(taskId);
    await sleep(2_000); // The kill's own actions settle before the next case counts.
    log(`${n} lines matching nothing: ${silent.total} actions (${actionTypes(silent.byType) || 'none'})`);
    figures.push({
      id: 'notices.monitorSilent',
      measure: `a monitored task printing ${n} lines that match nothing: actions`,
      raw: `${silent.total} actions${silent.total > 0 ? ` (${actionTypes(silent.byType)})` : ''}`,
      value: silent.total,
      unit: 'actions',
      ratio: null,
      ratioText: 'floor: 0',
      target: '0 actions',
      holds: silent.total === 0,
      gateOn: 'value',
      gateSlack: 0,
    });
  });

  it('a monitor notice per matching line, against a signal and an activity', async () => {
    const k = SIZES.notices;
    const taskId = await startBackground(
      tools,
      `sleep 3; for i in $(seq 1 ${k}); do echo "ERROR $i"; sleep ${LINE_GAP_S}; done; sleep 600`,
      { notify_on: '^ERROR' },
      exec,
    );
    await sleep(2_000);
    const from = injected.length;
    const monitor = await costOf(() =>
      waitFor(
        () => injected.length - from >= k,
        (k * LINE_GAP_S + 30) * 1_000,
        50,
        () => `${k} monitor notices`,
      ),
    );
    await kill(taskId);
    // The kill's own actions (the stop, the notice workflow closing without a completion notice: the
    // session's own kill answered for the end) settle before the floor is counted.
    await server.client.workflow.getHandle(`${taskId}-notice`).result();
    await sleep(1_000);
    // Temporal's own: one signal-with-start, then a signal at a time, each running one activity.
    const floorId = `floor-message-${randomUUID()}`;
    const floor = await costOf(async () => {
      for (let i = 0; i < k; i++)
        await server.client.workflow.signalWithStart('messageFloor', {
          workflowId: floorId,
          taskQueue: floorQueue,
          args: [k],
          signal: 'message',
          signalArgs: [],
        });
      await server.client.workflow.getHandle(floorId).result();
    });
    const perNotice = monitor.total / k;
    const perMessage = floor.total / k;
    log(
      `${k} notices: ${monitor.total} actions (${actionTypes(monitor.byType)}); floor ${floor.total} (${actionTypes(floor.byType)})`,
    );
    figures.push({
      id: 'notices.monitorNotice',
      measure: `a monitor's notice, ${k} one line each: actions per notice`,
      raw: `${fixed(perNotice)} (${monitor.total} in all: ${actionTypes(monitor.byType)}); floor ${fixed(perMessage)} (${actionTypes(floor.byType)})`,
      value: perNotice,
      unit: 'actions',
      ratio: perMessage > 0 ? perNotice / perMessage : null,
      ratioText: `${fixed(perMessage > 0 ? perNotice / perMessage : Number.NaN)} x floor`,
      target: 'at most 3 actions a notice',
      holds: perNotice <= 3,
      gateSlack: 0.25,
    });
    expect(
      injected.slice(from).filter((content) => content.includes(' printed 1 line matching ')),
    ).toHaveLength(k);
  });

  it('a reminder that fires, against a timer and an activity', async () => {
    const from = injected.length;
    const reminder = await costOf(async () => {
      const answer = text(await tools.bash_remind.execute({ after_ms: 1_000, note: 'look again' }, exec));
      if (!answer.startsWith('reminder ')) throw new Error(`bash_remind: ${answer}`);
      await waitFor(
        () => injected.length > from,
        30_000,
        50,
        () => 'the reminder',
      );
    });
    const floor = await costOf(async () => {
      await server.client.workflow.execute('timerFloor', {
        workflowId: `floor-timer-${randomUUID()}`,
        taskQueue: floorQueue,
        args: [1_000],
      });
    });
    log(
      `a reminder: ${reminder.total} actions (${actionTypes(reminder.byType)}); floor ${floor.total} (${actionTypes(floor.byType)})`,
    );
    figures.push({
      id: 'notices.reminder',
      measure: 'a reminder set and fired: actions',
      raw: `${reminder.total} (${actionTypes(reminder.byType)}); floor ${floor.total} (${actionTypes(floor.byType)})`,
      value: reminder.total,
      unit: 'actions',
      ratio: floor.total > 0 ? reminder.total / floor.total : null,
      ratioText: `${fixed(floor.total > 0 ? reminder.total / floor.total : Number.NaN)} x floor`,
      target: "at most the floor + 1 (the count of the session's reminders is a visibility query)",
      holds: reminder.total <= floor.total + 1,
      gateSlack: 0.5,
    });
  });
});
