/**
 * Sessions apart (docs/CONTAINMENT.md, "Sessions apart"): each command runs in its own PID
 * namespace, in its session's network (no host loopback), with the session's own /tmp, /var/tmp
 * and home, the spill directory and the worker's credential files hidden. A worker with root
 * launches it with the supervisor's `--session-launch` and runs it as its session's own uid, its
 * workdir shown as the session's by an idmapped mount (the inner supervisor's `--as` and
 * `--idmap`); one without launches it with bubblewrap, as its own uid, in a user namespace. Unlike
 * the sandbox, the root filesystem stays as it is: the kernel's permissions decide what a command
 * may read and write there.
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_SPILL_RETENTION_MS } from '../../shared/limits.js';
import type { CommandSpec } from '../../shared/task.js';
import { taskFiles } from '../supervisor/task-files.js';
import { copySupervisor, findBwrap, hide } from './sandbox.js';
import { DEFAULT_SESSION_UIDS, SessionIdentities, type UidRange } from './session-identities.js';
import { SESSION_DNS_ADDRESS, SessionNetworks } from './session-networks.js';
import {
  type SessionCredentials,
  type SessionWorkdir,
  sessionWorkdir,
  within,
  workdirPin,
  workdirRules,
} from './session-workdir.js';
import { temporalAddresses } from './temporal-addresses.js';

export interface SessionIsolationOptions {
  /** Files and directories no command may read (the worker's key files, TLS keys). The spill directory always. */
  hidden?: readonly string[];
  /**
   * Declared workdir roots (real paths, checked by `declaredRoots`): a directory of the worker's
   * under one is handed to a session that names it as its workdir. @default none
   */
  workdirRoots?: readonly string[];
  /** Where sandbox sessions' workspaces live: each session's is handed to it alone. @default none */
  workspaceDir?: string;
  /** The uids sessions get. @default 1879048192 + 1,000,000 */
  uids?: UidRange;
  /** The bubblewrap binary, for a worker without root. @default $DURABLE_BASH_BWRAP, else `bwrap` on PATH */
  bwrap?: string;
  /** The slirp4netns binary. @default `slirp4netns` on PATH */
  slirp4netns?: string;
  /** Whether commands reach out beyond their session's localhost. @default true */
  egress?: boolean;
  /** Ports of the host's loopback commands may reach at 127.0.0.1:<port>. @default none */
  allowedPorts?: readonly number[];
  /** The network namespace sessions' traffic leaves from. @default the worker's own */
  egressNetns?: string;
  /**
   * The Temporal server's address as the worker connects to it (`host:port`): sessions' networks
   * refuse every address it resolves to at start. @default the servers the worker is connected to at start
   */
  temporalAddress?: string;
  /**
   * How long a session's /tmp, /var/tmp and home stay after its last task here ended, as its
   * output does (then they go, and its uid is given back). @default the spill retention, 7 days
   */
  retentionMs?: number;
}

/**
 * A session's files on this host, as its disk cap and the spill quota count them
 * (spill/session-disk.ts): its own directories, and the tasks it launched here.
 */
export interface SessionFiles {
  session: string;
  /** Its own /tmp, /var/tmp and home (each there or not). */
  areas: string[];
  /** Its tasks here whose marks stand: those that may still run, and ended ones whose files are not swept yet. */
  tasks: string[];
  /** Those of `tasks` that may still run here. */
  running: string[];
  /** When its marks last changed (a launch, or a sweep that saw an end), else when its directory was made. */
  changedAtMs: number;
}

/** How one command is launched in its session: the launcher's argv, and the inner supervisor's options. */
export interface SessionLaunch {
  launcher: string[];
  inner: string[];
}

export interface SessionIsolation {
  /** Makes what the command's session needs on this host (its uid, directories, network) and says how to launch it. */
  launch(spec: CommandSpec): Promise<SessionLaunch>;
  /** The supervisor binary every isolated task runs, outside and inside (a private copy, as the sandbox's). */
  supervisor: string;
  /** One line for the worker's start. */
  summary: string;
  /**
   * Ends the networks of sessions with nothing running on this host (each launched task is marked
   * in its session's directory until its end is recorded); returns how many it ended. A session
   * idle here for the retention loses its directories and its uid too.
   */
  sweep(): Promise<number>;
  /** The files of `session` on this host, or of every session with directories here. */
  sessionFiles(session?: string): SessionFiles[];
  /**
   * Removes a session with nothing running here as the retention's sweep does (its network, its
   * directories, its uid), sooner: the spill quota's sweep, for the session idle longest. False
   * when a task of it may run here.
   */
  retire(session: string): Promise<boolean>;
}

/**
 * Where a spill directory's sessions keep their networks' records: for a worker with root, under
 * /run (or $DURABLE_BASH_RUN_DIR), which a reboot empties as it ends every holder, and where a 0.2.0
 * worker kept each namespace in a file (a mount point, which an `rm -rf` of the spill directory
 * would have refused).
 */
export function sessionNetworksDir(spillDir: string): string {
  // A worker without root never kept a namespace in a file: its records may live in the spill
  // directory, where it can write.
  if (process.getuid?.() !== 0) return path.join(spillDir, '.session-networks');
  const runDir = process.env.DURABLE_BASH_RUN_DIR || '/run/durable-bash';
  return path.join(runDir, createHash('sha256').update(spillDir).digest('hex').slice(0, 16), 'net');
}

/**
 * Ends every session network a spill directory's workers made on this host (they outlive a worker
 * by design): for tests and tools that clean up after themselves.
 */
export function endSessionNetworks(spillDir: string): void {
  endNetworksIn(sessionNetworksDir(spillDir));
  // A worker without root's, when this process has root (a test that ran one).
  endNetworksIn(path.join(spillDir, '.session-networks'));
  // And those a worker SIGKILLed mid-way never recorded (no worker of it runs now: any age).
  const supervisor = path.join(spillDir, '.bin', 'durable-bash-supervisor');
  new SessionNetworks({ dir: sessionNetworksDir(spillDir), supervisor }).endUnrecorded(0);
}

/** `endSessionNetworks` for every spill directory of a run directory (`DURABLE_BASH_RUN_DIR`). */
export function endSessionNetworksUnder(runDir: string): void {
  if (!existsSync(runDir)) return;
  for (const spill of readdirSync(runDir)) endNetworksIn(path.join(runDir, spill, 'net'));
}

function endNetworksIn(dir: string): void {
  if (!existsSync(dir)) return;
  const networks = new SessionNetworks({ dir });
  for (const session of networks.sessions()) networks.release(session);
}

/**
 * How old a holder no record names must be before a sweep ends it: a live worker records its
 * holder within seconds of starting it (the holder, then its slirp4netns and relay, each a few
 * milliseconds), so one this old belongs to a worker that died first.
 */
const UNRECORDED_NETWORK_AGE_MS = 60_000;

/** The key of commands that have no owner (and of tasks from clients before session keys). */
export const UNOWNED_SESSION = '0'.repeat(32);

/**
 * What a worker without root gives each command's bubblewrap, the launcher's and the start probe's
 * alike (so the probe tries what commands get): a user namespace of its own, the host's root as it
 * is, a fresh /dev and /proc, its own PID, IPC and UTS namespaces, a new session, no capability, the
 * worker's uid. A worker with root gets the same from the supervisor's `--session-launch`, which
 * keeps the inner supervisor's capabilities for its idmapped workdir and uid switch.
 */
const UNPRIVILEGED_BWRAP = [
  '--die-with-parent',
  '--new-session',
  '--unshare-user',
  '--unshare-pid',
  '--as-pid-1',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--cap-drop',
  'ALL',
  '--bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
];

/**
 * Sessions apart on this host; throws one line saying why not (no bwrap or slirp4netns, no user
 * namespaces for a worker without root). The worker says what it does instead. A worker with root
 * gives each session a uid of its own; one without keeps sessions apart by namespaces alone, all
 * of them as its own uid.
 */
export function createSessionIsolation(
  options: SessionIsolationOptions,
  supervisor: string,
  spillDir: string,
): SessionIsolation {
  const root = process.getuid?.() === 0;
  // A worker with root launches commands itself (the supervisor's --session-launch).
  const bwrap = root ? undefined : findBwrap(options.bwrap ?? process.env.DURABLE_BASH_BWRAP ?? 'bwrap');
  const privateSupervisor = copySupervisor(supervisor, spillDir);
  const base = path.join(spillDir, '.sessions');
  const identities = root
    ? new SessionIdentities(path.join(base, 'uids'), options.uids ?? DEFAULT_SESSION_UIDS)
    : undefined;
  const ownUid = process.getuid?.() ?? 0;
  const ownGid = process.getgid?.() ?? 0;
  const uidOf = (session: string) => identities?.uidOf(session) ?? ownUid;
  const networks = new SessionNetworks({
    ...(root ? {} : { userNamespace: true }),
    // The binary every isolated task's supervisors run: its holders and relays share their pages.
    supervisor: privateSupervisor,
    dir: sessionNetworksDir(spillDir),
    ...(options.slirp4netns ? { slirp4netns: options.slirp4netns } : {}),
    ...(options.egress === false ? { egress: false } : {}),
    ...(options.allowedPorts ? { allowedPorts: options.allowedPorts } : {}),
    ...(options.egressNetns ? { egressNetns: options.egressNetns } : {}),
    temporal: temporalAddresses(options.temporalAddress),
  });
  const hidden = [spillDir, ...(options.hidden ?? []).map((file) => path.resolve(file))];
  const hiddenDirs = hidden.filter((file) => hide(file)[0] === '--tmpfs');
  const rules = workdirRules({
    roots: options.workdirRoots,
    spillDir,
    workspaceDir: options.workspaceDir,
    hidden,
    ...(bwrap !== undefined ? { launcherDir: path.dirname(bwrap) } : {}),
  });
  const { home } = rules;
  const credentialsOf = (uid: number): SessionCredentials =>
    root ? { uid, gids: [uid] } : { uid: ownUid, gids: [ownGid, ...(process.getgroups?.() ?? [])] };
  const failure =
    bwrap === undefined
      ? probe(privateSupervisor, uidOf(UNOWNED_SESSION))
      : probeUnprivileged(bwrap, privateSupervisor, options.egress !== false);
  if (failure !== undefined) throw new Error(failure);
  // A session's launches and its sweep, one at a time: a network is never ended under a launch.
  const queues = new Map<string, Promise<unknown>>();
  const serially = <T>(session: string, step: () => Promise<T>): Promise<T> => {
    const next = (queues.get(session) ?? Promise.resolve()).then(step, step);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(session, settled);
    void settled.then(() => {
      if (queues.get(session) === settled) queues.delete(session);
    });
    return next;
  };
  const tasksDir = (session: string) => path.join(base, session, 'tasks');
  const retentionMs = options.retentionMs ?? DEFAULT_SPILL_RETENTION_MS;
  // Sessions whose directories this worker made (or found) since their last sweep.
  const prepared = new Map<string, ReturnType<typeof sessionDirs>>();
  /** A session's directories and its uid go (its network went first): after the retention, or over the spill quota. */
  const removeSession = (session: string) => {
    prepared.delete(session);
    rmSync(path.join(base, session), { recursive: true, force: true });
    identities?.release(session);
  };
  return {
    supervisor: privateSupervisor,
    summary: root
      ? `isolation: sessions apart (a uid per session from ${(options.uids ?? DEFAULT_SESSION_UIDS).first}, own PID namespace, ${networks.summary}, private /tmp and home)`
      : `isolation: sessions apart without root (own user and PID namespaces, ${networks.summary}, private /tmp and home; every session runs as the worker's uid ${ownUid}, so one can change another's workdir by its path)`,
    async launch(spec) {
      const session = spec.session ?? UNOWNED_SESSION;
      const { uid, workdir, dirs, netns, userns } = await serially(session, async () => {
        const uid = uidOf(session);
        // Before anything of the session is made: a refused workdir changes nothing.
        const workdir = sessionWorkdir(spec.workdir, session, credentialsOf(uid), rules);
        // Marked first: the sweep keeps the network and directories of a session with a task marked.
        markTask(tasksDir(session), spec.taskId, taskFiles(spillDir, spec.taskId).attempt);
        let dirs = prepared.get(session);
        // Checked: another worker on this spill directory may have swept them.
        if (dirs === undefined || !existsSync(dirs.home)) {
          dirs = sessionDirs(path.join(base, session), uid);
          prepared.set(session, dirs);
        }
        return { uid, workdir, dirs, ...(await networks.ensure(session)) };
      });
      // What a session's launcher gets, with root or without: its directories, its workdir bound
      // (over its own /tmp or home when it lies there), then, after the workdir so a path inside it
      // stays as it must, the worker's code read-only, the hidden paths, the supervisor and the
      // session's resolv.conf.
      const sessionView = [
        ...sessionBinds(dirs, home),
        ...workdirBind(workdir, root ? uid : undefined, home),
        ...rules.code
          .filter((dir) => workdir.handed && within(dir, workdir.path))
          .flatMap((dir) => ['--ro-bind', dir, dir]),
        ...hidden.flatMap(hide),
        '--ro-bind',
        privateSupervisor,
        privateSupervisor,
        '--ro-bind',
        dirs.resolvConf,
        '/etc/resolv.conf',
        ...hiddenDirs.flatMap((dir) => ['--remount-ro', dir]),
        '--chdir',
        workdir.path,
      ];
      // The session enters the directory checked, unless it names one it has its own of (its /tmp).
      const ownCopy = !workdir.handed && ownDirs(home).includes(workdir.path);
      const pin = ownCopy ? [] : workdirPin(workdir);
      if (bwrap !== undefined) {
        const launcher = [
          'nsenter',
          '--preserve-credentials',
          `--user=${userns}`,
          `--net=${netns}`,
          '--',
          bwrap,
          ...UNPRIVILEGED_BWRAP,
          '--uid',
          String(ownUid),
          '--gid',
          String(ownGid),
          ...sessionView,
        ];
        return { launcher, inner: pin };
      }
      const launcher = [privateSupervisor, '--session-launch', '--net', netns, ...sessionView];
      return { launcher, inner: ['--as', String(uid), ...pin] };
    },
    async sweep() {
      // Networks a worker of this directory SIGKILLed while making them never recorded.
      let ended = networks.endUnrecorded(UNRECORDED_NETWORK_AGE_MS);
      const withNetwork = new Set(networks.sessions());
      const withDirs = listDir(base).filter((name) => name !== 'uids');
      for (const session of new Set([...withNetwork, ...withDirs])) {
        await serially(session, async () => {
          if (runningHere(path.join(base, session), spillDir).length > 0) return;
          if (withNetwork.has(session)) {
            networks.release(session);
            ended += 1;
          }
          // Its files stay as long as its output does, from when its last task's mark went.
          const idleSince = mtimeMs(tasksDir(session)) ?? mtimeMs(path.join(base, session)) ?? 0;
          if (!withDirs.includes(session) || Date.now() - idleSince < retentionMs) return;
          removeSession(session);
        });
      }
      return ended;
    },
    sessionFiles(session) {
      const sessions = session !== undefined ? [session] : listDir(base).filter((name) => name !== 'uids');
      return sessions.map((key) => {
        const dir = path.join(base, key);
        const running = runningHere(dir, spillDir);
        const { tmp, varTmp, home } = sessionDirPaths(dir);
        return {
          session: key,
          areas: [tmp, varTmp, home],
          tasks: [...running, ...endedHere(dir, spillDir)],
          running,
          changedAtMs: mtimeMs(tasksDir(key)) ?? mtimeMs(dir) ?? 0,
        };
      });
    },
    retire(session) {
      return serially(session, async () => {
        if (runningHere(path.join(base, session), spillDir).length > 0) return false;
        networks.release(session);
        removeSession(session);
        return true;
      });
    },
  };
}

/** The session's own /tmp, /var/tmp and home, and an empty /run. */
function sessionBinds(dirs: ReturnType<typeof sessionDirs>, home: string | undefined): string[] {
  return [
    '--bind',
    dirs.tmp,
    '/tmp',
    '--bind',
    dirs.varTmp,
    '/var/tmp',
    // Sockets live there (databases, docker.sock, dbus): none are reachable.
    '--tmpfs',
    '/run',
    ...(home !== undefined ? ['--bind', dirs.home, home] : []),
  ];
}

/**
 * The session's tasks (in its directory `dir`) that may still run here: marked, with no end
 * recorded, and claimed (or still being launched: marked in the last minute). The marks of the
 * others move to `ended/`: their output counts for the session's disk cap until it is swept.
 */
function runningHere(dir: string, spillDir: string): string[] {
  const marks = path.join(dir, 'tasks');
  let names: string[];
  try {
    names = readdirSync(marks);
  } catch {
    return [];
  }
  const running: string[] = [];
  for (const taskId of names) {
    const files = taskFiles(spillDir, taskId);
    const markedAtMs = mtimeMs(path.join(marks, taskId)) ?? 0;
    const claimed = mtimeMs(files.state) !== undefined;
    if (mtimeMs(files.exit) !== undefined || (!claimed && Date.now() - markedAtMs > LAUNCH_GRACE_MS)) {
      moveToEnded(dir, taskId);
    } else running.push(taskId);
  }
  return running;
}

/** Moves an ended task's mark from `tasks/` to `ended/` (made on the first); one that cannot move goes. */
function moveToEnded(dir: string, taskId: string): void {
  const mark = path.join(dir, 'tasks', taskId);
  const ended = path.join(dir, 'ended');
  try {
    mkdirSync(ended, { recursive: true, mode: 0o700 });
    renameSync(mark, path.join(ended, taskId));
  } catch {
    rmSync(mark, { force: true });
  }
}

/** The session's ended tasks here whose files are not swept yet; the marks of swept ones go. */
function endedHere(dir: string, spillDir: string): string[] {
  const ended = path.join(dir, 'ended');
  return listDir(ended).filter((taskId) => {
    const files = taskFiles(spillDir, taskId);
    if (mtimeMs(files.state) !== undefined || mtimeMs(files.stdout) !== undefined) return true;
    rmSync(path.join(ended, taskId), { force: true });
    return false;
  });
}

/**
 * Marks a task as the session's: a hard link to the attempt's record, which the command runner
 * writes just before the launch, so the mark's mtime is the attempt's start. A link is a
 * directory entry (about 9 µs here), where a new empty file cost a new inode (80-360 µs of kernel
 * CPU on ext4: docs/PERFORMANCE.md). Without that record (a launch not from the runner), an empty file.
 */
function markTask(marks: string, taskId: string, attemptRecord: string): void {
  const mark = path.join(marks, taskId);
  for (let tries = 0; ; tries++) {
    try {
      linkSync(attemptRecord, mark);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Launched again (a start that failed before its claim): the new attempt's mark replaces it.
      if (code === 'EEXIST' && tries === 0) rmSync(mark, { force: true });
      // The marks' directory is made on a session's first task, or again after a sweep.
      else if (code === 'ENOENT' && tries === 0) mkdirSync(marks, { recursive: true, mode: 0o700 });
      else if (code === 'ENOENT' || code === 'EEXIST' || code === 'EXDEV' || code === 'EPERM') {
        // Unlinked first: a write through an older mark would empty the attempt record it links.
        rmSync(mark, { force: true });
        writeFileSync(mark, '');
        return;
      } else throw err;
    }
  }
}

/** How long a marked task may take to be claimed by its supervisor before its mark counts for nothing. */
const LAUNCH_GRACE_MS = 60_000;

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function mtimeMs(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The launcher's binds of the workdir. One handed to the session comes down a way its uid can pass,
 * bound writable, and with root shown as the session's (`--bind-as`, an idmapped mount). Any other
 * is left where it is, with the rights the host's modes give the session's uid (nothing is made
 * passable); only one below the session's own /tmp, /var/tmp or home is bound as it is, to be there
 * at all. With root, a bind is pinned to the directory checked (`--inode`).
 */
function workdirBind(workdir: SessionWorkdir, uid: number | undefined, home: string | undefined): string[] {
  if (workdir.ino === 0) return []; // Not there: the workdir check says so.
  const pin = uid !== undefined ? ['--inode', `${workdir.dev}:${workdir.ino}`] : [];
  if (!workdir.handed) {
    const below = ownDirs(home).some((own) => own !== workdir.path && within(workdir.path, own));
    return below ? [...pin, '--bind', workdir.path, workdir.path] : [];
  }
  const bind = uid !== undefined ? ['--bind-as', String(uid)] : ['--bind'];
  const way = wayDown(workdir.path, uid ?? process.getuid?.() ?? 0, home);
  return [...way, ...pin, ...bind, workdir.path, workdir.path];
}

/** The directories a session has its own of, bound over the host's. */
function ownDirs(home: string | undefined): string[] {
  return ['/tmp', '/var/tmp', ...(home !== undefined ? [home] : [])];
}

/**
 * Runs `true` as a session would run it (the supervisor's `--session-launch` with an idmapped
 * workdir, the inner supervisor's uid switch, its seccomp filter), in a scratch workdir of root's; undefined when it ran as the session and could write there, else the first line of why not.
 */
function probe(supervisor: string, uid: number): string | undefined {
  // Where a session's uid can pass to it (not the spill directory, which is closed to it).
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-probe-'));
  try {
    const run = spawnSync(
      supervisor,
      [
        '--session-launch',
        // Its own network (the worker's): the probe's launch joins it as a command joins its session's.
        '--net',
        '/proc/self/ns/net',
        // Handed to the session as a workdir under a declared root is: bound, shown as its own.
        '--bind-as',
        String(uid),
        workdir,
        workdir,
        '--chdir',
        workdir,
        supervisor,
        '--inner',
        '--as',
        String(uid),
        '--',
        'bash',
        '-c',
        `touch probe && [ "$(id -u)" = ${uid} ]`,
      ],
      { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    if (run.error) return run.error.message;
    if (run.status === 0) return undefined;
    return run.stderr.trim().split('\n')[0] || `a probe command exited with ${run.status ?? run.signal}`;
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}

/**
 * For a worker without root: runs `true` as a session would run it (in a user and network namespace
 * of its own, bubblewrap's namespaces in it, the inner supervisor), and checks that slirp4netns
 * could make the session's way out (a tap device: /dev/net/tun open to this user). Undefined when
 * all works, else the first line of why not.
 */
function probeUnprivileged(bwrap: string, supervisor: string, egress: boolean): string | undefined {
  if (egress) {
    try {
      closeSync(openSync('/dev/net/tun', 'r+'));
    } catch (err) {
      return `a session's way out needs /dev/net/tun, closed to this user (${(err as NodeJS.ErrnoException).code}); --no-session-egress does without`;
    }
  }
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-probe-'));
  try {
    const run = spawnSync(
      'unshare',
      [
        '--user',
        '--map-root-user',
        '--net',
        '--',
        bwrap,
        ...UNPRIVILEGED_BWRAP,
        '--uid',
        String(process.getuid?.() ?? 0),
        '--chdir',
        workdir,
        supervisor,
        '--inner',
        '--',
        'bash',
        '-c',
        'touch probe',
      ],
      { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    if (run.error) return run.error.message;
    if (run.status === 0) return undefined;
    return run.stderr.trim().split('\n')[0] || `a probe command exited with ${run.status ?? run.signal}`;
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}

/** Where a session's own directories lie in its directory `dir`: /tmp, /var/tmp, home; and its resolv.conf. */
function sessionDirPaths(dir: string) {
  return {
    tmp: path.join(dir, 'tmp'),
    varTmp: path.join(dir, 'var-tmp'),
    home: path.join(dir, 'home'),
    resolvConf: path.join(dir, 'resolv.conf'),
  };
}

/** The session's own directories on this host, made its uid's: /tmp, /var/tmp, home; and its resolv.conf. */
function sessionDirs(dir: string, uid: number) {
  const dirs = sessionDirPaths(dir);
  // /tmp's own mode for its /tmp and /var/tmp; a home others may pass but not list. The launcher,
  // root without CAP_DAC_OVERRIDE, must pass through each to reach a workdir below it.
  for (const [own, mode] of [
    [dirs.tmp, 0o1777],
    [dirs.varTmp, 0o1777],
    [dirs.home, 0o711],
  ] as const) {
    mkdirSync(own, { recursive: true });
    chownSync(own, uid, uid);
    chmodSync(own, mode);
  }
  // Names go through slirp4netns's forwarder to the host's own resolver.
  writeFileSync(dirs.resolvConf, `nameserver ${SESSION_DNS_ADDRESS}\n`, { mode: 0o644 });
  return dirs;
}

/**
 * bubblewrap's arguments for the way down to the workdir, as the session's uid can pass it. A
 * directory above it that the uid could not pass (no search permission for others) is replaced by
 * an empty passable one (what it held was closed to the session anyway); below a replaced one (or
 * below the session's own /tmp, /var/tmp or home), each directory on the way is made passable (it
 * would be made 0700 otherwise).
 */
function wayDown(workdir: string, uid: number, home: string | undefined): string[] {
  const above: string[] = [];
  for (let dir = path.dirname(workdir); dir !== path.dirname(dir); dir = path.dirname(dir))
    above.unshift(dir);
  const own = new Set(ownDirs(home));
  const args: string[] = [];
  let replaced = false;
  for (const dir of above) {
    if (own.has(dir)) replaced = true;
    else if (replaced) args.push('--perms', '0755', '--dir', dir);
    else if (!passable(dir, uid)) {
      args.push('--perms', '0755', '--tmpfs', dir);
      replaced = true;
    }
  }
  return args;
}

function passable(dir: string, uid: number): boolean {
  try {
    const { mode, uid: owner } = statSync(dir);
    return owner === uid ? (mode & 0o100) !== 0 : (mode & 0o001) !== 0;
  } catch {
    return true; // Missing: the workdir check reports it.
  }
}
