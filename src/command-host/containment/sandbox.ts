/**
 * The optional bubblewrap sandbox: commands see a read-only root, their workdir (and any configured
 * paths) writable, a private /tmp, no network (the host's would give them the Temporal server), no
 * capabilities and their own PID namespace. Chosen on the worker, never by a tool argument; and it fails closed: a worker whose
 * sandbox cannot start refuses to start at all, so nothing ever runs unsandboxed by accident.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandSpec } from '../../shared/task.js';
import { executablePath } from '../supervisor/executable-path.js';
import { SYSTEM_DIRS, sessionWorkdir, within, workdirPin, workdirRules } from './session-workdir.js';

export interface SandboxOptions {
  /** More paths commands may write besides their workdir (a cache, a home directory). */
  writable?: readonly string[];
  /**
   * Paths commands must not even read (the worker's TLS key files, say): a directory is replaced by
   * an empty one, a file by an empty file. The spill directory is always hidden.
   */
  hidden?: readonly string[];
  /** The bubblewrap binary. @default $DURABLE_BASH_BWRAP, else `bwrap` on PATH */
  bwrap?: string;
  /**
   * Declared workdir roots (real paths, checked by `declaredRoots`): a directory of the worker's
   * under one is writable to a command that names it as its workdir. @default none
   */
  workdirRoots?: readonly string[];
  /** Where sandbox sessions' workspaces live: each session's is writable to its commands alone. @default none */
  workspaceDir?: string;
}

export interface Sandbox {
  /**
   * The launcher's argv for a command of `spec`, up to (not including) the inner supervisor, and
   * the inner supervisor's options. Its workdir is writable when it is the session's own
   * (session-workdir.ts), else read-only as the rest of the host; throws `WorkdirRefusedError` for
   * one the session may not run in.
   */
  launch(spec: Pick<CommandSpec, 'workdir' | 'session'>): { launcher: string[]; inner: string[] };
  /**
   * The supervisor binary every sandboxed task runs, outside and inside: a private copy in the
   * spill directory, which no sandboxed command can see or write (the one in the package may lie
   * under a workdir, and the worker runs it outside the sandbox).
   */
  supervisor: string;
  /** One line for the worker's start. */
  summary: string;
}

/** The session of commands that have no owner, as session-isolation.ts names it. */
const UNOWNED_SESSION = '0'.repeat(32);

/**
 * Checks that bubblewrap runs a command here with every restriction in place (a write in the
 * workdir works, one outside it fails), and returns how to launch commands in it; throws one line
 * saying why it cannot.
 */
export function createSandbox(options: SandboxOptions, supervisor: string, spillDir: string): Sandbox {
  const bwrap = findBwrap(options.bwrap ?? process.env.DURABLE_BASH_BWRAP ?? 'bwrap');
  const privateSupervisor = copySupervisor(supervisor, spillDir);
  // What no writable path may be or contain (nor, for system directories, lie in). The package
  // itself is not among them: a workdir may hold the project that installed it (its code stays
  // read-only there), and the binary the worker runs outside the sandbox is the private copy in
  // the spill directory.
  const hidden = [spillDir, ...(options.hidden ?? []).map((file) => path.resolve(file))];
  const rules = workdirRules({
    roots: options.workdirRoots,
    spillDir,
    workspaceDir: options.workspaceDir,
    hidden,
    launcherDir: path.dirname(bwrap),
  });
  const writable = (options.writable ?? []).map((dir) => writablePath(dir, rules.guarded));
  // Commands run as the worker's uid, every capability dropped: its modes decide the way in.
  const who = { uid: rules.workerUid, gids: [process.getgid?.() ?? 0, ...(process.getgroups?.() ?? [])] };
  const hiddenDirs = hidden.filter((file) => hide(file)[0] === '--tmpfs');
  const argv = (workdir: string, handed = true): string[] => [
    bwrap,
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    // The inner supervisor is the namespace's PID 1 (and reaps its orphans): one process less a task.
    '--as-pid-1',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    // Sockets are reachable through a read-only mount (docker.sock, dbus, databases): none are.
    '--tmpfs',
    '/run',
    ...writable.flatMap((dir) => ['--bind', dir, dir]),
    // Writable when it is the session's own; else as the rest of the host is, read-only, and bound
    // only below the private /tmp, to be there at all.
    ...(handed
      ? ['--bind', workdir, workdir]
      : workdir.startsWith('/tmp/')
        ? ['--ro-bind', workdir, workdir]
        : []),
    ...rules.code
      .filter((dir) => [...writable, ...(handed ? [workdir] : [])].some((open) => within(dir, open)))
      .flatMap((dir) => ['--ro-bind', dir, dir]),
    // After the workdir, so what it holds of them stays hidden too.
    ...hidden.flatMap(hide),
    // After the private /tmp and the hidden spill directory, so the supervisor is still there.
    '--ro-bind',
    privateSupervisor,
    privateSupervisor,
    // Last, once the binds inside them have their mount points: hidden directories stay empty.
    ...hiddenDirs.flatMap((dir) => ['--remount-ro', dir]),
    '--chdir',
    workdir,
  ];
  const failure = probe(argv, privateSupervisor, spillDir);
  if (failure !== undefined) throw new Error(`the bwrap sandbox cannot start on this host: ${failure}`);
  return {
    launch: (spec) => {
      const workdir = sessionWorkdir(spec.workdir, spec.session ?? UNOWNED_SESSION, who, rules);
      // Its own /tmp (a fresh tmpfs here) is not the host's directory checked.
      const ownCopy = !workdir.handed && workdir.path === '/tmp';
      return { launcher: argv(workdir.path, workdir.handed), inner: ownCopy ? [] : workdirPin(workdir) };
    },
    supervisor: privateSupervisor,
    summary: `sandbox: bwrap (read-only root, writable workdir${writable.length ? ` and ${writable.join(', ')}` : ''}, private /tmp, no network, no capabilities, own PID namespace)`,
  };
}

/**
 * The real path of a `--sandbox-writable` path, for the worker's start: it must not be, or hold, a
 * guarded path (`/` holds them all; `/tmp` holds the spill directory), nor lie inside a system
 * directory; else one line saying why the sandbox cannot start. Links are resolved first, as bwrap would.
 */
function writablePath(dir: string, guarded: readonly string[]): string {
  const refuse = (why: string) =>
    new Error(`the bwrap sandbox cannot start on this host: sandbox writable path ${dir} ${why}`);
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw refuse('does not exist');
  }
  const held = guarded.map((guard) => path.resolve(guard)).find((guard) => within(guard, real));
  if (held !== undefined) throw refuse(`cannot be used in the sandbox: it would make ${held} writable`);
  const system = SYSTEM_DIRS.find((systemDir) => within(real, systemDir));
  if (system !== undefined) throw refuse(`cannot be used in the sandbox: it lies in ${system}`);
  return real;
}

/** Hides a path: an empty (later read-only) directory over a directory, an empty file over a file. */
export function hide(file: string): string[] {
  try {
    return lstatSync(file).isDirectory() ? ['--tmpfs', file] : ['--ro-bind', '/dev/null', file];
  } catch {
    return []; // Not there: nothing to hide.
  }
}

/** Copies the supervisor into `<spill dir>/.bin/` (private, 0700), where no sandbox reaches it. */
export function copySupervisor(supervisor: string, spillDir: string): string {
  const dir = path.join(spillDir, '.bin');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const copy = path.join(dir, 'durable-bash-supervisor');
  const tmp = `${copy}.tmp.${process.pid}`;
  copyFileSync(supervisor, tmp);
  chmodSync(tmp, 0o700);
  // Renamed into place: a running supervisor keeps its own (now unlinked) copy.
  renameSync(tmp, copy);
  return copy;
}

export function findBwrap(name: string): string {
  const found = executablePath(name);
  if (found !== undefined) return found;
  const where = name.includes('/') ? `no bwrap at ${name}` : `no ${name} on PATH`;
  throw new Error(`the bwrap sandbox cannot start on this host: ${where} (install bubblewrap)`);
}

/**
 * Runs a command in the sandbox exactly as a task would run (the inner supervisor reporting on fd
 * 3): it must write its workdir and fail to write outside it. Undefined when it did, else the first
 * line of why not.
 */
function probe(
  argv: (workdir: string) => string[],
  supervisor: string,
  spillDir: string,
): string | undefined {
  // Outside the spill directory, which is hidden over the workdir's bind.
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-probe-'));
  try {
    const [program, ...args] = argv(workdir) as [string, ...string[]];
    const check = `touch probe && ! (: > ${JSON.stringify(path.join(spillDir, '.escaped'))}) 2>/dev/null && ! (: > /.durable-bash-escaped) 2>/dev/null`;
    const run = spawnSync(program, [...args, supervisor, '--inner', '--', 'bash', '-c', check], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    if (run.error) return run.error.message;
    if (run.status === 0) return undefined;
    const said = run.stderr.trim().split('\n')[0];
    return said || `a probe command exited with ${run.status ?? run.signal} (its writes were not confined)`;
  } finally {
    rmSync(workdir, { recursive: true, force: true });
    rmSync(path.join(spillDir, '.escaped'), { force: true });
  }
}
