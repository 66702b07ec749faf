/** Command workers in the test's process, each on a fresh task queue: for a file, or started by a test. */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, inject } from 'vitest';
import { endSessionNetworks } from '../../src/command-host/containment/session-isolation.js';
import type { ExecutorOptions } from '../../src/command-host/executor-config.js';
import { isSameProcess, readRecord } from '../../src/command-host/supervisor/supervisor-records.js';
import { type BashWorker, createBashWorker } from '../../src/worker/bash-worker.js';
import { removeDir } from './remove-dir.js';
import { createDevServerEnv } from './temporal-env.js';
import { TEST_WORKDIR_ROOTS } from './workdir-roots.js';

export interface RunningWorker {
  /** A command worker, or (in the notice tests) an agent worker. */
  worker: BashWorker | Worker;
  taskQueue: string;
  /** The command worker's spill directory (absent for an agent worker). */
  spillDir?: string;
  /** Shuts the worker down and waits for it to stop. */
  stop(): Promise<void>;
}

/**
 * `DURABLE_BASH_TEST_SANDBOX=bwrap` runs every test worker's commands in the bubblewrap sandbox
 * (`npm run test:sandbox`): the normal tests, inside it.
 */
function sandboxFromEnv(): ExecutorOptions {
  // `npm run test:isolation`: every worker keeps sessions apart.
  if (process.env.DURABLE_BASH_TEST_ISOLATION === 'session') return { isolation: 'session' };
  if (process.env.DURABLE_BASH_TEST_SANDBOX !== 'bwrap') return {};
  // Not the test's cwd (the checkout): tests that give no workdir get a scratch one.
  return { sandbox: 'bwrap', defaultWorkdir: mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sandboxed-')) };
}

/**
 * Starts a command worker on a fresh task queue, with the run's shared workflow bundle. Unless the
 * test names one, the worker gets a spill directory of its own, and whatever command it leaves
 * running (a test that failed half-way) is ended when it stops.
 */
export async function startBashWorker(
  env: TestWorkflowEnvironment,
  executor: ExecutorOptions = {},
  taskQueue = `test-${randomUUID()}`,
  /** A second worker of the same queue needs a connection of its own (the SDK refuses two on one). */
  connection = env.nativeConnection,
): Promise<RunningWorker> {
  const sandboxed = sandboxFromEnv();
  const ownSpillDir =
    executor.spillDir === undefined
      ? mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-spill-'))
      : undefined;
  const worker = await createBashWorker({
    connection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    executor: {
      workdirRoots: TEST_WORKDIR_ROOTS,
      ...sandboxed,
      ...(ownSpillDir ? { spillDir: ownSpillDir } : {}),
      ...executor,
    },
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  const running = worker.run();
  return {
    worker,
    taskQueue,
    spillDir: executor.spillDir ?? ownSpillDir,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      // A shutdown waits for every activity in flight: say which, and what the commands do, if it hangs.
      const slow = setTimeout(() => reportSlowStop(worker, taskQueue), SLOW_STOP_MS);
      try {
        await running;
      } finally {
        clearTimeout(slow);
        if (ownSpillDir) await endLeftCommands(ownSpillDir);
        // A worker with sessions apart leaves their networks by design: end them.
        endSessionNetworks(executor.spillDir ?? ownSpillDir ?? '');
        // The directories the helper made, not the test's: nothing of the worker runs from them now.
        for (const dir of [ownSpillDir, sandboxed.defaultWorkdir]) if (dir !== undefined) removeDir(dir);
      }
    },
  };
}

const SLOW_STOP_MS = 30_000;

function reportSlowStop(worker: BashWorker, taskQueue: string): void {
  const ps = spawnSync('ps', ['-eo', 'pid,ppid,etimes,stat,wchan:24,args', '--forest'], { encoding: 'utf8' });
  const processes = ps.stdout
    .split('\n')
    .filter((line) => /durable-bash|bwrap|bash -c/.test(line))
    .join('\n');
  console.error(
    `worker of ${taskQueue} still stopping after ${SLOW_STOP_MS}ms: ${JSON.stringify(worker.getStatus())}\n${processes}`,
  );
}

/** SIGKILLs (through its supervisor) every command still running from a spill directory. */
export async function endLeftCommands(spillDir: string): Promise<void> {
  for (const name of readdirSync(spillDir).filter((file) => file.endsWith('.state'))) {
    const record = await readRecord(path.join(spillDir, name));
    if (record === undefined || record.tombstone || !isSameProcess(record, 'supervisor')) continue;
    process.kill(record.supervisorPid, 'SIGUSR1'); // It SIGKILLs the command's group, then records the end.
  }
}

export interface DevServerWithWorker {
  env: TestWorkflowEnvironment;
  worker: RunningWorker;
}

/**
 * Gives the calling file (or describe block) its own dev server and a command worker on a fresh
 * task queue: started before its tests, stopped after. Read the fields inside hooks and tests.
 */
export function useDevServerWithWorker(
  options: {
    executor?: ExecutorOptions;
    dynamicConfig?: Readonly<Record<string, number>>;
    /** @default a fresh one */
    taskQueue?: string;
  } = {},
): DevServerWithWorker {
  const suite = {} as DevServerWithWorker;
  beforeAll(async () => {
    suite.env = await createDevServerEnv(options.dynamicConfig);
    suite.worker = await startBashWorker(suite.env, options.executor, options.taskQueue);
  });
  afterAll(async () => {
    await suite.worker?.stop();
    await suite.env?.teardown();
  });
  return suite;
}
