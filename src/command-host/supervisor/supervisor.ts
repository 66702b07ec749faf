/**
 * Starting a command's supervisor (supervisor/, docs/SUPERVISOR.md) from the worker, and
 * what its report says. The supervisor is the command's real parent and runs in its own session, so
 * it outlives the worker; the nursery (supervisor-nursery.ts) starts most of them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KILL_GRACE_MS } from '../../shared/limits.js';
import type { TerminalSize } from '../../shared/terminal.js';
import type { TaskLimits } from '../containment/cgroups.js';
import type { TaskFiles } from './task-files.js';

/** The supervisor binary: `DURABLE_BASH_SUPERVISOR`, else the one `npm run build` compiles. */
export function supervisorPath(): string {
  const fromEnv = process.env.DURABLE_BASH_SUPERVISOR;
  if (fromEnv) return fromEnv;
  // Three levels up from src/command-host/supervisor (or its dist twin) is the package root.
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  return path.join(root, 'dist', 'bin', 'durable-bash-supervisor');
}

/** Fails with what to run when the supervisor binary is missing: no command can run without it. */
export function assertSupervisorBinary(binary = supervisorPath()): void {
  if (!existsSync(binary)) {
    throw new Error(`no supervisor binary at ${binary}; build it with: npm run build`);
  }
}

export interface SupervisorSpawn {
  files: TaskFiles;
  /** The task's cgroups, to be made by the supervisor (none: the process tree contains it). */
  cgroups: readonly string[];
  limits: TaskLimits;
  /** A sandbox launcher's argv: the command then runs inside it, under an inner supervisor. */
  launcher?: readonly string[];
  /** The inner supervisor's options (a session's `--as` and `--idmap`). */
  inner?: readonly string[];
  /** The supervisor binary to run. @default supervisorPath() */
  binary?: string;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdoutFd: number;
  stderrFd: number;
  /** The command's stdin comes from `files.stdin`, a FIFO the supervisor makes (else /dev/null). */
  keepStdinOpen?: boolean;
  /** Run the command on a pseudo-terminal of this size that the supervisor holds (docs/TERMINALS.md). */
  terminal?: TerminalSize;
}

export type SpawnReport =
  /** The command runs; `exited` settles when the supervisor (this worker's child) exits. */
  | { kind: 'started'; exited: Promise<void> }
  /** Another attempt's supervisor (or a kill's tombstone) holds the task: attach to it instead. */
  | { kind: 'claimed' }
  | { kind: 'error'; message: string };

/** The supervisor's flags for a task's limits and its kill grace (a spawned one's and the nursery's). */
export function limitFlags(limits: TaskLimits): string[] {
  return [
    ...(limits.processes > 0 ? ['--pids-max', String(limits.processes)] : []),
    ...(limits.memoryBytes > 0 ? ['--memory-max', String(limits.memoryBytes)] : []),
    ...(limits.outputBytesPerStream > 0 ? ['--output-max', String(limits.outputBytesPerStream)] : []),
    '--grace-ms',
    String(KILL_GRACE_MS),
  ];
}

/**
 * What runs before `bash -c <command>` in a sandbox launcher (the sandbox's, or a session's): the
 * launcher, then the inner supervisor with its options. Nothing without a launcher.
 */
export function launcherProgram(options: {
  launcher?: readonly string[];
  inner?: readonly string[];
  innerBinary?: string;
  terminal?: TerminalSize;
}): string[] {
  if (!options.launcher) return [];
  return [
    ...options.launcher,
    options.innerBinary ?? supervisorPath(),
    '--inner',
    // The outer supervisor only passes the terminal on: the inner one makes it the command's own.
    ...(options.terminal ? ['--tty'] : []),
    ...(options.inner ?? []),
    '--',
  ];
}

/**
 * A terminal task's supervisor flags: the terminal, where its sizes are recorded and a resize is
 * read from, and the stdin FIFO its typing comes through. The terminal's output is relayed, so it
 * needs an output limit: with none configured, one no log reaches.
 */
export function terminalFlags(files: TaskFiles, terminal: TerminalSize, limits: TaskLimits): string[] {
  return [
    ...['--tty', `${terminal.cols}x${terminal.rows}`],
    ...['--tty-events', files.ttyEvents, '--tty-resize', files.ttySize, '--stdin', files.stdin],
    ...(limits.outputBytesPerStream > 0 ? [] : ['--output-max', String(Number.MAX_SAFE_INTEGER)]),
  ];
}

/**
 * Starts a supervisor for the command in a new session, so it outlives this worker, and waits for
 * its report on fd 3: `started <pid>` once the command's identity is on disk, `claimed`, or
 * `error <message>`.
 */
export function spawnSupervisor(options: SupervisorSpawn): Promise<SpawnReport> {
  const { files } = options;
  const { limits } = options;
  const flags = [
    ...options.cgroups.flatMap((dir) => ['--cgroup', dir]),
    ...limitFlags(limits),
    ...(options.launcher ? ['--sandboxed'] : []),
    ...(options.terminal
      ? terminalFlags(files, options.terminal, limits)
      : options.keepStdinOpen
        ? ['--stdin', files.stdin]
        : []),
  ];
  const binary = options.binary ?? supervisorPath();
  const program = launcherProgram({ ...options, innerBinary: binary });
  const args = [...flags, files.state, files.exit, '--', ...program, 'bash', '-c', options.command];
  let child: ChildProcess;
  try {
    child = spawn(binary, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', options.stdoutFd, options.stderrFd, 'pipe'],
    });
  } catch (err) {
    // Thrown at once for what no retry can change (E2BIG: a command past the kernel's argument
    // limit, an environment too large): the command never started, and never will.
    return Promise.resolve({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
  }
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  // This worker may stop before the supervisor: never keep the event loop alive for it.
  child.unref();
  const report = child.stdio[3] as NodeJS.ReadableStream & { unref?: () => void };
  return new Promise<SpawnReport>((resolve) => {
    let text = '';
    child.once('error', (err) => resolve({ kind: 'error', message: err.message }));
    report.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    report.once('close', () => {
      resolve(reportOf(text, exited));
    });
  });
}

/** What a supervisor's report (all it wrote on fd 3) says; `exited` settles when it exits. */
export function reportOf(text: string, exited: Promise<void>): SpawnReport {
  const line = text.split('\n')[0] ?? '';
  if (line.startsWith('started ')) return { kind: 'started', exited };
  if (line === 'claimed') return { kind: 'claimed' };
  return { kind: 'error', message: line.replace(/^error /, '') || 'the supervisor ended without a report' };
}
