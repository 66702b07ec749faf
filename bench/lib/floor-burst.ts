/**
 * Temporal's burst floor as the bench runs it: N workflows started by a few callers, each running
 * one activity that heartbeats at once and then once a minute until ended (or, with a command,
 * that first spawns `bash -c command` and keeps it); the time until every activity runs, and the
 * CPU spent until then.
 */
import { randomUUID } from 'node:crypto';
import { waitFor } from '../../test/helpers/processes.js';
import { FLOOR_HEARTBEAT_MS, onHeartbeatingStarted } from '../floor/activities.js';
import { type FloorBundle, startFloorWorker } from './floor-worker.js';
import { CpuByProgram, CpuSpan, inLanes } from './host.js';
import type { BenchServer } from './server.js';

export interface FloorBurstOptions {
  tasks: number;
  callers: number;
  /** How long the burst may take to run; past it, `runningMs` is NaN. */
  deadlineMs: number;
  /** Run by each activity (`burstSpawnFloor`); none: the plain floor (`burstFloor`). */
  command?: string;
}

export interface FloorBurst {
  /** Until every activity ran (NaN past the deadline), and until every start returned. */
  runningMs: number;
  returnedMs: number;
  /** How many activities ran by then. */
  running: number;
  cpu: ReturnType<CpuSpan['end']>;
  programs: ReturnType<CpuByProgram['end']>;
  /** Terminates the burst's workflows (they stand until then) and shuts its worker down. */
  end(): Promise<void>;
}

export async function runFloorBurst(
  server: BenchServer,
  bundle: FloorBundle,
  options: FloorBurstOptions,
): Promise<FloorBurst> {
  const { tasks, callers, deadlineMs, command } = options;
  const queue = `bench-burst-floor-${randomUUID()}`;
  const { worker, running: workerRunning } = await startFloorWorker(server, queue, bundle, {
    maxConcurrentActivityTaskExecutions: tasks + 50,
    maxHeartbeatThrottleInterval: FLOOR_HEARTBEAT_MS,
  });
  let running = 0;
  onHeartbeatingStarted(() => {
    running++;
  });
  const ids = Array.from({ length: tasks }, () => `burst-floor-${randomUUID()}`);
  const end = async () => {
    await inLanes(ids, callers, async (workflowId) => {
      await server.client.workflow
        .getHandle(workflowId)
        .terminate('benchmark done')
        .catch(() => undefined);
    });
    onHeartbeatingStarted(() => {});
    worker.shutdown();
    await workerRunning;
  };
  try {
    const start = performance.now();
    const cpuSpan = new CpuSpan();
    const programs = new CpuByProgram();
    let returnedMs = Number.NaN;
    const starts = inLanes(ids, callers, async (workflowId) => {
      await (command === undefined
        ? server.client.workflow.start('burstFloor', { taskQueue: queue, workflowId })
        : server.client.workflow.start('burstSpawnFloor', { taskQueue: queue, workflowId, args: [command] }));
    }).then(() => {
      returnedMs = performance.now() - start;
    });
    const runningMs = await waitFor(() => running >= tasks, deadlineMs, 20).then(
      () => performance.now() - start,
      () => Number.NaN,
    );
    const cpu = cpuSpan.end();
    const byProgram = programs.end();
    await starts;
    return { runningMs, returnedMs, running, cpu, programs: byProgram, end };
  } catch (err) {
    await end();
    throw err;
  }
}
