// `npm run bench:profile`: where a `durable-bash worker` spends its CPU in a burst of background
// starts (docs/PERFORMANCE.md, "Where the worker's CPU goes in a burst"). Starts an in-memory dev
// server and a worker under `node --cpu-prof` (one profile per thread: main, workflow), starts
// PROFILE_N (default 300) background `sleep` tasks from 8 callers, and waits until every command
// runs. Then it stops the worker gracefully (which writes the profiles), waits for the sleeps to
// end and prints each thread's self time per task within the burst, by package and by function,
// with the callers of the natives that take most (bench/lib/cpu-profile.ts). PROFILE_OFF=1 runs
// the same burst without the profiler and prints only the CPU and memory figures, after Temporal's
// own burst floor on the same server (N workflows each running one heartbeating activity, the
// worker in this process) and that floor with each activity spawning the same command, each with
// its CPU by program (the server's apart).
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'vitest';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import { waitFor } from '../test/helpers/processes.js';
import { startWorkerProcess } from '../test/helpers/worker-process.js';
import { summarizeProfiles } from './lib/cpu-profile.js';
import { runFloorBurst } from './lib/floor-burst.js';
import { bundleFloorWorkflows, type FloorBundle } from './lib/floor-worker.js';
import {
  CpuByProgram,
  CpuSpan,
  endLeftovers,
  inLanes,
  programsPerTask,
  StartedRecords,
  startBackground,
  type Tools,
} from './lib/host.js';
import { type BenchServer, startBenchServer } from './lib/server.js';

const TASKS = Number(process.env.PROFILE_N ?? 300);
const PROFILING = process.env.PROFILE_OFF !== '1';
/** Long enough to outlast the burst, short enough that the tasks end on their own after it. */
const SLEEP_S = 25;
const CALLERS = 8;

it(`a burst of ${TASKS} background starts, the worker under the profiler`, async () => {
  const server = await startBenchServer('memory');
  if (!PROFILING) {
    const bundle = await bundleFloorWorkflows();
    await burstFloor(server, bundle);
    await burstFloor(server, bundle, `sleep ${SLEEP_S}`);
  }
  const queue = `profile-${randomUUID()}`;
  const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-profile-'));
  const profileDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-cpu-profiles-'));
  // The worker helper execs `<wrapper...> <node> <worker...>`: this wrapper drops that node for
  // one with the profiler's flags (NODE_OPTIONS may not carry --cpu-prof).
  const wrapper = path.join(profileDir, 'node-with-profiler.sh');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nshift\nexec "${process.execPath}" --cpu-prof --cpu-prof-dir="${profileDir}" "$@"\n`,
    { mode: 0o755 },
  );
  const worker = await startWorkerProcess(
    { address: server.address },
    queue,
    ['--namespace', server.namespace, '--spill-dir', spillDir],
    PROFILING ? { wrapper: [wrapper] } : {},
  );
  try {
    // Past the worker's start-up, which the window leaves out anyway.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idleRss = worker.rssBytes();
    const tools = Object.fromEntries(
      createBashTools({ client: server.client, taskQueue: queue }).map((tool) => [tool.name, tool]),
    ) as Tools;
    const started = new StartedRecords(spillDir);
    // Profiles time their samples on the monotonic clock, in microseconds.
    const windowStartUs = Number(process.hrtime.bigint() / 1000n);
    const startMs = performance.now();
    const cpu = new CpuSpan(worker.child.pid as number);
    const programs = new CpuByProgram();
    const callers = inLanes(
      Array.from({ length: TASKS }, (_, i) => i),
      CALLERS,
      async () => {
        await startBackground(tools, `sleep ${SLEEP_S}`);
      },
    );
    await waitFor(() => started.count() >= TASKS, 300_000, 100);
    const runningMs = performance.now() - startMs;
    const windowEndUs = Number(process.hrtime.bigint() / 1000n);
    const spent = cpu.end();
    const byProgram = programs.end();
    await callers;
    const growthMiB = (worker.rssBytes() - idleRss) / 1024 / 1024;
    console.log(
      `${TASKS} tasks all running in ${(runningMs / 1000).toFixed(2)} s; CPU: the worker ${spent.other.toFixed(2)} s, ` +
        `the callers ${spent.self.toFixed(2)} s, the machine ${spent.machine.toFixed(2)} s; ` +
        `worker RSS growth ${growthMiB.toFixed(1)} MiB`,
    );
    console.log(`CPU by program, ms a task: ${programsPerTask(byProgram, TASKS)}`);
    worker.child.kill('SIGTERM');
    await once(worker.child, 'exit');
    if (PROFILING)
      console.log(summarizeProfiles(profileDir, { startUs: windowStartUs, endUs: windowEndUs }, TASKS));
  } finally {
    await worker.crash();
    // The sleeps end by themselves; what still runs then is ended here.
    await new Promise((resolve) => setTimeout(resolve, (SLEEP_S + 2) * 1000));
    endLeftovers(spillDir);
    await server.stop();
    rmSync(spillDir, { recursive: true, force: true });
    rmSync(profileDir, { recursive: true, force: true });
  }
}, 600_000);

/**
 * Temporal's burst floor (bench/lib/floor-burst.ts, as bench/budgets.bench.ts runs it), or with
 * `command`, the same with each activity spawning `bash -c command` and keeping it: its time and
 * CPU, printed.
 */
async function burstFloor(server: BenchServer, bundle: FloorBundle, command?: string): Promise<void> {
  const name = command === undefined ? 'floor' : 'floor with a spawn';
  const burst = await runFloorBurst(server, bundle, {
    tasks: TASKS,
    callers: CALLERS,
    deadlineMs: 300_000,
    ...(command !== undefined ? { command } : {}),
  });
  try {
    console.log(
      `${name}: ${burst.running} of ${TASKS} workflows' activities running in ${(burst.runningMs / 1000).toFixed(2)} s; CPU: the callers and worker ${burst.cpu.self.toFixed(2)} s, the machine ${burst.cpu.machine.toFixed(2)} s`,
    );
    console.log(`${name}: CPU by program, ms a task: ${programsPerTask(burst.programs, TASKS)}`);
  } finally {
    await burst.end();
  }
}
