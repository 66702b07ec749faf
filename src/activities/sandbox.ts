/**
 * The optional bubblewrap sandbox: commands see a read-only root, their workdir (and any configured
 * paths) writable, a private /tmp, no network unless allowed, no capabilities and their own PID
 * namespace. Chosen on the worker, never by a tool argument; and it fails closed: a worker whose
 * sandbox cannot start refuses to start at all, so nothing ever runs unsandboxed by accident.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface SandboxOptions {
  /** Let commands use the host's network (the default is a namespace with only loopback). */
  network?: boolean;
  /** More paths commands may write besides their workdir (a cache, a home directory). */
  writable?: readonly string[];
  /** The bubblewrap binary. @default $DURABLE_BASH_BWRAP, else `bwrap` on PATH */
  bwrap?: string;
}

export interface Sandbox {
  /** The launcher's argv for a command in `workdir`, up to (not including) the inner supervisor. */
  launcher(workdir: string): string[];
  /** One line for the worker's start. */
  summary: string;
}

/**
 * Checks that bubblewrap runs a command here with every restriction in place, and returns how to
 * launch commands in it; throws one line saying why it cannot.
 */
export function createSandbox(options: SandboxOptions, supervisor: string): Sandbox {
  const bwrap = findBwrap(options.bwrap ?? process.env.DURABLE_BASH_BWRAP ?? 'bwrap');
  const writable = (options.writable ?? []).map((dir) => path.resolve(dir));
  const launcher = (workdir: string): string[] => [
    bwrap,
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    ...(options.network ? ['--share-net'] : []),
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
    // After the private /tmp, so a supervisor or workdir that lives under /tmp is still there.
    '--ro-bind',
    supervisor,
    supervisor,
    ...[...writable, workdir].flatMap((dir) => ['--bind', dir, dir]),
    '--chdir',
    workdir,
  ];
  const failure = probe(launcher('/'), supervisor);
  if (failure !== undefined) throw new Error(`the bwrap sandbox cannot start on this host: ${failure}`);
  return {
    launcher,
    summary: `sandbox: bwrap (read-only root, writable workdir${writable.length ? ` and ${writable.join(', ')}` : ''}, private /tmp, ${options.network ? 'host network' : 'no network'}, no capabilities, own PID namespace)`,
  };
}

function findBwrap(name: string): string {
  const candidates = name.includes('/')
    ? [name]
    : (process.env.PATH ?? '').split(':').map((dir) => path.join(dir || '.', name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // Next.
    }
  }
  const where = name.includes('/') ? `no bwrap at ${name}` : `no ${name} on PATH`;
  throw new Error(`the bwrap sandbox cannot start on this host: ${where} (install bubblewrap)`);
}

/**
 * Runs `true` in the sandbox exactly as a command would run (the inner supervisor reporting on fd
 * 3); undefined when it worked, else the first line of why not.
 */
function probe(launcher: readonly string[], supervisor: string): string | undefined {
  const [program, ...args] = launcher as [string, ...string[]];
  const run = spawnSync(program, [...args, supervisor, '--inner', '--', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  if (run.error) return run.error.message;
  if (run.status === 0) return undefined;
  const said = run.stderr.trim().split('\n')[0];
  return said || `it exited with ${run.status ?? run.signal}`;
}
