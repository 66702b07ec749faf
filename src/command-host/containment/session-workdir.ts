/**
 * What a session may be given as its workdir (docs/CONTAINMENT.md, "A session's workdir"), decided
 * by the worker on the resolved path at each launch, whatever the client checked: a model's
 * `workdir` is hostile until then. A session is handed a directory (writable, its owner's files
 * shown as the session's) only when the worker made it for that session (its workspace), or when
 * it lies under a root the operator declared and is the worker's own; anything else it gets as it
 * is, with no more rights than its uid has by the directory's modes, and one it cannot enter is
 * refused in one line before anything runs.
 */
import { lstatSync, realpathSync, type Stats, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { workerCodeDirs } from './worker-code.js';

/** A workdir the session may not run in: the message is the task's one line. */
export class WorkdirRefusedError extends Error {
  override readonly name = 'WorkdirRefusedError';
}

/** What the worker knows of its own directories, against which a workdir is judged. */
export interface WorkdirRules {
  /** Declared roots (real paths): worker-owned directories under them are handed to sessions. */
  roots: readonly string[];
  /** The worker's spill directory: every task's output and records, never a session's. */
  spillDir: string;
  /** Where sandbox sessions' workspaces live: `<workspaceDir>/<session key>/...` is that session's. */
  workspaceDir: string;
  /** Paths hidden from sessions (the worker's key files, `--sandbox-hide`): no workdir lies in one. */
  hidden: readonly string[];
  /**
   * Directories no handed-over workdir may be or hold (the system's, the spill and workspace
   * directories, the launcher's binaries): a workdir holding one is used as it is.
   */
  guarded: readonly string[];
  /** The worker's uid: under a root, only its directories are handed over. */
  workerUid: number;
  /**
   * The worker's own code (worker-code.ts): a workdir in it is never handed over, and one holding it
   * only as its direct children (bound read-only there, which a session cannot move away).
   */
  code: readonly string[];
  /** The worker's home (its dotfiles and keys): sessions get one of their own, never this one. */
  home: string | undefined;
}

/**
 * The rules for a worker's launches, real paths all: its declared roots (`declaredRoots`), spill and
 * workspace directories (`workspaceDir` may not exist yet), the paths it hides, and the launcher's
 * own binary directory when one is used (bwrap's), with its code and home found on this host.
 */
export function workdirRules(place: {
  roots: readonly string[] | undefined;
  spillDir: string;
  workspaceDir: string | undefined;
  hidden: readonly string[];
  launcherDir?: string;
}): WorkdirRules {
  const spillDir = realPathOf(place.spillDir);
  const workspaceDir = realPathOf(place.workspaceDir ?? path.join(spillDir, '.no-workspaces'));
  const launcher = place.launcherDir !== undefined ? [place.launcherDir] : [];
  return {
    roots: place.roots ?? [],
    spillDir,
    workspaceDir,
    hidden: place.hidden.map(realPathOf),
    guarded: [...SYSTEM_DIRS, spillDir, workspaceDir, ...launcher].map(realPathOf),
    workerUid: process.getuid?.() ?? 0,
    // A session may change a handed workdir; the code the worker runs stays as it is there.
    code: workerCodeDirs(),
    home: workerHome(),
  };
}

/** Who the session's commands run as, for the check of the way to its workdir. */
export interface SessionCredentials {
  uid: number;
  /** Its gid and supplementary groups: a session uid's own gid alone, a worker's its groups. */
  gids: readonly number[];
}

/**
 * The workdir as the session gets it. `handed`: bound writable and shown as the session's (the
 * worker made it for the session, or it is the worker's own under a declared root). Otherwise the
 * session enters it as its uid may. `dev` and `ino` name the directory checked, so the launcher
 * binds that directory and no other (a link swapped in after the check fails the launch).
 */
export interface SessionWorkdir {
  path: string;
  handed: boolean;
  dev: number;
  ino: number;
}

/** The system directories a workdir is never handed over in, nor above. */
export const SYSTEM_DIRS = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
  '/var/lib',
  '/var/mail',
  '/var/run',
  '/var/spool',
];

/** The worker's home, real; undefined for none (or `/`, which every root would hold). */
export function workerHome(): string | undefined {
  const home = realPathOf(os.homedir());
  return home === '/' ? undefined : home;
}

/**
 * A path with the links of its longest existing part resolved, as a workdir's real path is
 * compared with it (a spill or workspace directory may not exist yet, or lie below a link).
 */
export function realPathOf(file: string): string {
  const resolved = path.resolve(file);
  try {
    return realpathSync(resolved);
  } catch {
    const parent = path.dirname(resolved);
    return parent === resolved ? resolved : path.join(realPathOf(parent), path.basename(resolved));
  }
}

/** Whether `inner` is `outer` or lies below it (both real, normalized paths). */
export function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer === '/' ? '/' : `${outer}/`);
}

/**
 * How the session with key `session` gets `workdir`; throws `WorkdirRefusedError` when it may not
 * run there. A workdir that is not there is returned as given, unhanded: the workdir check before
 * the launch says so (`assertWorkdir`).
 */
export function sessionWorkdir(
  workdir: string,
  session: string,
  who: SessionCredentials,
  rules: WorkdirRules,
): SessionWorkdir {
  let real: string;
  let stat: Stats;
  try {
    real = realpathSync(workdir);
    stat = statSync(real);
  } catch {
    return { path: workdir, handed: false, dev: 0, ino: 0 };
  }
  const named = real === workdir ? workdir : `${workdir} (${real})`;
  if (within(real, rules.spillDir))
    throw new WorkdirRefusedError(
      `workdir ${named} cannot be used by a session: it lies in the worker's spill directory`,
    );
  const hidden = rules.hidden.find((file) => within(real, path.resolve(file)));
  if (hidden !== undefined)
    throw new WorkdirRefusedError(
      `workdir ${named} cannot be used by a session: it lies in ${hidden}, hidden from sessions`,
    );
  if (within(real, rules.workspaceDir)) {
    if (within(real, path.join(rules.workspaceDir, session)))
      return { path: real, handed: true, dev: stat.dev, ino: stat.ino };
    throw new WorkdirRefusedError(
      `workdir ${named} cannot be used by this session: it lies in another session's workspace`,
    );
  }
  if (handedUnderRoot(real, stat, rules)) return { path: real, handed: true, dev: stat.dev, ino: stat.ino };
  const closed = closedStep(real, who);
  if (closed !== undefined)
    throw new WorkdirRefusedError(`workdir ${named} cannot be entered by this session: ${closed}`);
  // A worker without root runs sessions as its own uid: its home would be theirs to read and write.
  if (rules.home !== undefined && within(real, rules.home))
    throw new WorkdirRefusedError(
      `workdir ${named} cannot be used by a session: it lies in the worker's home, which sessions get their own of`,
    );
  return { path: real, handed: false, dev: stat.dev, ino: stat.ino };
}

/**
 * Whether a directory under a declared root is handed over: it is the worker's own; neither a system
 * directory (nor in one) nor holding a guarded directory or the worker's home; not in the worker's
 * code, and holding it only as direct children (a session could rename a directory between, and
 * put its own code where the worker's was).
 */
function handedUnderRoot(real: string, stat: Stats, rules: WorkdirRules): boolean {
  if (!rules.roots.some((root) => within(real, root))) return false;
  if (stat.uid !== rules.workerUid) return false;
  if (SYSTEM_DIRS.some((system) => within(real, system))) return false;
  if (rules.guarded.some((guard) => within(path.resolve(guard), real))) return false;
  if (rules.home !== undefined && within(rules.home, real)) return false;
  if (rules.code.some((code) => within(real, code))) return false;
  return rules.code.every((code) => !within(code, real) || path.dirname(code) === real);
}

/**
 * The first directory on the way to `real` (itself included) that `who` may not pass by its modes,
 * said as `<dir> is mode 0700, owned by uid 0`; undefined when every one lets it through.
 */
function closedStep(real: string, who: SessionCredentials): string | undefined {
  let dir = '/';
  for (const name of ['', ...real.split('/').filter(Boolean)]) {
    dir = path.join(dir, name);
    let stat: Stats;
    try {
      stat = lstatSync(dir);
    } catch {
      return `${dir} cannot be read`;
    }
    const bit = stat.uid === who.uid ? 0o100 : who.gids.includes(stat.gid) ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0)
      return `${dir} is mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}, owned by uid ${stat.uid}`;
  }
  return undefined;
}

/**
 * The inner supervisor's options that make it run nothing unless its workdir is the directory the
 * worker checked (bwrap binds by path: a link swapped in meanwhile would be bound instead).
 */
export function workdirPin(workdir: SessionWorkdir): string[] {
  return workdir.ino === 0 ? [] : ['--workdir-inode', `${workdir.dev}:${workdir.ino}`];
}

/**
 * The declared roots, real and checked, for the worker's start: each must be an existing directory
 * that is neither `/` nor a system directory, nor in one or holding one, nor the worker's `home` or
 * holding it. Throws one line naming the first that is not.
 */
export function declaredRoots(roots: readonly string[], home: string | undefined): string[] {
  return roots.map((root) => {
    let real: string;
    try {
      real = realpathSync(root);
    } catch {
      throw new Error(`workdir root ${root} does not exist`);
    }
    if (!statSync(real).isDirectory()) throw new Error(`workdir root ${root} is not a directory`);
    if (real === '/') throw new Error(`workdir root ${root} cannot be declared: it is /`);
    const system = SYSTEM_DIRS.find((dir) => within(real, dir));
    if (system !== undefined)
      throw new Error(`workdir root ${root} cannot be declared: it lies in ${system}`);
    const held = SYSTEM_DIRS.find((dir) => within(dir, real));
    if (held !== undefined) throw new Error(`workdir root ${root} cannot be declared: it holds ${held}`);
    if (home !== undefined && within(home, real))
      throw new Error(
        `workdir root ${root} cannot be declared: it holds the worker's home ${home} (its dotfiles and keys); declare a project directory (--workdir-root)`,
      );
    return real;
  });
}
