import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { waitFor } from './processes.js';

// The worker as users run it: the built CLI (npm test and npm run bench build first).
const BIN = path.resolve('dist/cli/main.js');

export interface WorkerProcess {
  child: ChildProcess;
  /** Resident memory of the worker process now, in bytes. */
  rssBytes(): number;
  /** Ends it the way a crash would: SIGKILL, no graceful shutdown. */
  crash(): Promise<void>;
}

/**
 * Starts `durable-bash worker` in its own process and resolves once it polls `taskQueue`. With
 * `fileSizeLimitKiB`, the worker (and so every supervisor it starts) runs under that RLIMIT_FSIZE,
 * as on a disk that fills up.
 */
export async function startWorkerProcess(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  extraArgs: string[] = [],
  options: { fileSizeLimitKiB?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<WorkerProcess> {
  const worker = [BIN, 'worker', '--address', env.address, '--task-queue', taskQueue, ...extraArgs];
  const [file, args] =
    options.fileSizeLimitKiB === undefined
      ? ['node', worker]
      : ['bash', ['-c', `ulimit -f ${options.fileSizeLimitKiB}; exec "$0" "$@"`, 'node', ...worker]];
  const child = spawn(file, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  let banner = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    banner += chunk.toString();
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  await waitFor(() => banner.includes('worker polling') || exited(), 60_000);
  if (exited()) throw new Error(`worker exited: ${banner}`);
  return {
    child,
    rssBytes() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
      return Number(kib) * 1024;
    },
    async crash() {
      if (exited()) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
