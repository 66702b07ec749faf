/** `durable-bash worker` in a process of its own, as users run it (the built bin). */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { CLI_BIN } from './cli.js';
import { waitFor } from './processes.js';
import { TEST_WORKDIR_ROOTS } from './workdir-roots.js';

export interface WorkerProcess {
  child: ChildProcess;
  /** Resident memory of the worker process now, in bytes. */
  rssBytes(): number;
  /** Ends it the way a crash would: SIGKILL, no graceful shutdown. */
  crash(): Promise<void>;
  /** What it printed on stderr so far (its start lines first). */
  stderr(): string;
}

/**
 * Starts `durable-bash worker` in its own process and resolves once it polls `taskQueue`. With
 * `fileSizeLimitKiB`, the worker (and so every supervisor it starts) runs under that RLIMIT_FSIZE,
 * as on a disk that fills up.
 */
export async function startWorkerProcess(
  env: Pick<TestWorkflowEnvironment, 'address'>,
  taskQueue: string,
  extraArgs: string[] = [],
  options: {
    fileSizeLimitKiB?: number;
    env?: NodeJS.ProcessEnv;
    wrapper?: string[];
    bin?: string;
    /** The node a wrapper execs. @default this process's */
    node?: string;
  } = {},
): Promise<WorkerProcess> {
  const worker = [
    options.bin ?? CLI_BIN,
    'worker',
    '--address',
    env.address,
    '--task-queue',
    taskQueue,
    // This tree's worker declares the tests' roots unless the test names its own (a release's
    // worker knows no such flag).
    ...(options.bin === undefined && !extraArgs.includes('--workdir-root')
      ? TEST_WORKDIR_ROOTS.flatMap((root) => ['--workdir-root', root])
      : []),
    ...extraArgs,
  ];
  // A wrapper (another user, a namespace) execs `node <worker...>` with its arguments appended.
  const [file, args]: [string, string[]] = options.wrapper
    ? [
        options.wrapper[0] as string,
        [...options.wrapper.slice(1), options.node ?? process.execPath, ...worker],
      ]
    : options.fileSizeLimitKiB === undefined
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
    stderr: () => banner,
    async crash() {
      if (exited()) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
