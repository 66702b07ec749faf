import { type ChildProcess, spawn } from 'node:child_process';

/** How a process ended: an exit code, or the signal that ended it. */
export interface ProcessExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface GroupSpawnOptions {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdoutFd: number;
  stderrFd: number;
}

/**
 * Runs `bash -c <command>` as the leader of a new session and process group, writing straight into
 * the spill files, so output never passes through (or waits on) the worker's memory.
 */
export function spawnGroup(options: GroupSpawnOptions): { child: ChildProcess; exit: Promise<ProcessExit> } {
  const child = spawn('bash', ['-c', options.command], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', options.stdoutFd, options.stderrFd],
  });
  const exit = new Promise<ProcessExit>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  return { child, exit };
}

/** Sends a signal to every process in the group led by `pid`; a group that is already gone is fine. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** The child's environment: the worker's, less Temporal credentials and configured secrets. */
export function commandEnv(
  secretEnv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const secrets = new Set(secretEnv);
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.startsWith('TEMPORAL_') && !secrets.has(name)),
  );
}
