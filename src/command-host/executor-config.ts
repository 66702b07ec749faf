/**
 * How a worker runs commands: its options (`ExecutorOptions`, each field with its default), their
 * compiled form, and the config the command activities run with. As the Temporal SDK compiles a
 * worker's options, `compileExecutorOptions` only fills defaults, checks values and converts them;
 * it probes nothing and makes nothing. What the host offers (cgroups, bwrap, sessions apart) is
 * found when the worker is created: `setUpExecutor` (executor-setup.ts) makes the `ExecutorConfig`.
 */
import os from 'node:os';
import path from 'node:path';
import type { DenyRule } from '../policy/policy-types.js';
import { type CompiledRules, compileDenyRules } from '../policy/rules.js';
import { positiveOption } from '../shared/checks.js';
import {
  DEFAULT_LOST_AFTER_MS,
  DEFAULT_MAX_OUTPUT_BYTES_PER_STREAM,
  DEFAULT_MAX_PROCESSES,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_OUTPUT_LIMIT_BYTES,
  DEFAULT_SPILL_QUOTA_BYTES,
  DEFAULT_SPILL_RETENTION_MS,
  DEFAULT_TIMEOUT_MS,
  HEARTBEAT_TIMEOUT_MS,
} from '../shared/limits.js';
import { hostTaskQueue } from '../shared/task-queues.js';
import type { Containment, TaskLimits } from './containment/cgroups.js';
import type { Sandbox, SandboxOptions } from './containment/sandbox.js';
import type { UidRange } from './containment/session-identities.js';
import type { SessionIsolation, SessionIsolationOptions } from './containment/session-isolation.js';
import { defaultHostId } from './host-identity.js';
import type { SessionDisk } from './spill/session-disk.js';

/** How a worker runs commands. Every field is optional; `compileExecutorOptions` fills the defaults. */
export interface ExecutorOptions {
  /**
   * Foreground timeout when a call gives none.
   * @default DEFAULT_TIMEOUT_MS (2 minutes)
   */
  defaultTimeoutMs?: number;
  /**
   * Cap on a foreground timeout; a larger request is clamped to it.
   * @default DEFAULT_MAX_TIMEOUT_MS (10 minutes)
   */
  maxTimeoutMs?: number;
  /**
   * Workdir for a call whose session has no cwd and that names none.
   * @default the worker process's cwd
   */
  defaultWorkdir?: string;
  /**
   * Directories whose subdirectories (and themselves) a session's commands may be handed as their
   * workdir when sessions are apart or sandboxed (docs/CONTAINMENT.md, "A session's workdir"):
   * writable, the worker's files there shown as the session's. Only a directory of the worker's own
   * user that is not a system directory and holds none of the worker's is handed; any other workdir
   * the session gets with its uid's rights alone, and one it cannot enter is refused. Each must
   * exist, and be neither `/` nor in a system directory. `durable-bash dev` declares the directory
   * it starts in.
   * @default [] (only a session's own workspace is handed to it)
   */
  workdirRoots?: string[];
  /**
   * Bytes of each stream kept in a result; the complete stream stays in its spill file.
   * @default DEFAULT_OUTPUT_LIMIT_BYTES (30 KiB)
   */
  outputLimitBytes?: number;
  /**
   * Private directory (0700) for the spill files that hold each run's complete output.
   * @default `<os tmpdir>/durable-bash-<uid>`
   */
  spillDir?: string;
  /**
   * Where sandbox sessions' workspaces live on this host (docs/SANDBOXES.md, "Workspaces"): each is
   * `<workspaceDir>/<session key>/<random id>`, mode 0700, a workdir its session's commands write.
   * Not in the spill directory, which commands never see.
   * @default `<os tmpdir>/durable-bash-workspaces-<uid>`
   */
  workspaceDir?: string;
  /**
   * How long a spill file no command here still writes is kept after its last write; older ones
   * are removed (checked at most every minute, when a command starts).
   * @default DEFAULT_SPILL_RETENTION_MS (7 days)
   */
  spillRetentionMs?: number;
  /**
   * The task queue whose workers run this worker's commands, for commands that run on another host
   * or in a sandbox; the workflow side stays here.
   * @default the worker's own task queue
   */
  commandTaskQueue?: string;
  /**
   * Environment variables never passed to commands, on top of every `TEMPORAL_*` variable (the
   * worker's own credentials).
   * @default []
   */
  secretEnv?: string[];
  /**
   * This host's stable identity: it names the host's own task queue, where every attempt, kill and
   * re-attach of a command started here goes. Must stay the same across restarts of the worker, and
   * differ between hosts (and between workers with different spill directories on one host).
   * @default `<hostname>-<hash of /etc/machine-id and the spill directory>`
   */
  hostId?: string;
  /**
   * How long a task waits for a worker on its host to come back before it ends lost.
   * @default DEFAULT_LOST_AFTER_MS (10 minutes)
   */
  lostAfterMs?: number;
  /**
   * Without a heartbeat for this long, a command's worker counts as gone (its host died with it; a
   * restarted worker says so at once). A running command heartbeats every 2/5 of this, at most once
   * a minute: a shorter timeout notices a dead host sooner and costs the server more heartbeats.
   * @default HEARTBEAT_TIMEOUT_MS (300 s: a heartbeat every 2 minutes)
   */
  heartbeatTimeoutMs?: number;
  /**
   * Bytes of each of a task's stdout and stderr kept in its spill file; past it the command's
   * writes to that stream fail (a flood like `yes` then ends by SIGPIPE) and the result says so.
   * @default DEFAULT_MAX_OUTPUT_BYTES_PER_STREAM (1 GiB)
   */
  maxOutputBytesPerStream?: number;
  /**
   * Processes and threads one task may have at once (a fork bomb stops there). Needs a cgroup.
   * @default DEFAULT_MAX_PROCESSES (4096)
   */
  maxProcesses?: number;
  /**
   * Memory one task may use; past it the kernel kills a process of the task. Needs a cgroup.
   * @default half of the host's memory
   */
  maxMemoryBytes?: number;
  /**
   * How a task's processes are kept together: `auto` takes a cgroup per task where the host lets
   * the worker make one, else the supervisor's process tree; `process-tree` never uses cgroups.
   * @default 'auto'
   */
  containment?: 'auto' | 'process-tree';
  /**
   * Bytes of spill files kept on this host; past it the files of the tasks that ended longest ago
   * are removed first (never a running task's).
   * @default DEFAULT_SPILL_QUOTA_BYTES (20 GiB)
   */
  spillQuotaBytes?: number;
  /**
   * With sessions apart: bytes one session's files on this host may hold (its /tmp, /var/tmp and
   * home, and its tasks' stdout and stderr), measured at its launches, every few seconds while a
   * task of it runs here, and at the spill sweep (no kernel quota: it may pass the cap by what it
   * writes between two measurements). Past it, its running tasks here are ended (SIGKILL), each
   * end saying so, and its commands are refused, a plain `rm` alone running, until it removes some.
   * A quarter of the quota by default: one session can never hold more than a quarter of what the
   * host keeps, so three others at their caps still leave room for retained output.
   * @default a quarter of `spillQuotaBytes` (5 GiB of the default 20 GiB)
   */
  sessionDiskCapBytes?: number;
  /**
   * When set, commands get only these variables of the worker's environment (a name, or a prefix
   * ending in `*`, like `LC_*`), instead of all but `TEMPORAL_*` and `secretEnv`. Those two are
   * withheld in either mode.
   * @default unset: the worker's environment less TEMPORAL_* and secretEnv
   */
  envAllowlist?: string[];
  /**
   * Commands get variables that keep them from waiting for a person (PAGER=cat,
   * GIT_TERMINAL_PROMPT=0, DEBIAN_FRONTEND=noninteractive, ...: NON_INTERACTIVE_ENV), under the
   * worker's own environment, which wins.
   * @default true
   */
  nonInteractiveDefaults?: boolean;
  /**
   * Commands this worker refuses to run, whatever the client's policy: each simple command of a
   * command line is checked before anything is spawned (see `createRulePolicy` for the rule
   * format), and one that cannot be read with certainty is refused too. A refused task ends failed
   * with `denied by the worker: <reason>`. Text rules, not a sandbox.
   * @default []
   */
  denyCommands?: DenyRule[];
  /**
   * Run every command under bubblewrap (`bwrap`): read-only root, writable workdir (and
   * `sandboxWritable`), private /tmp, no network, no capabilities, its own PID namespace. Fails
   * closed: a worker whose sandbox cannot start refuses to start.
   * @default 'none'
   */
  sandbox?: 'none' | 'bwrap';
  /**
   * `session`: keep sessions apart (docs/CONTAINMENT.md, "Sessions apart"): each command runs in its
   * own PID namespace and its session's network (no host loopback), with private /tmp and home, the
   * spill directory and `sandboxHidden` paths hidden; as its session's own uid when the worker has
   * root, as the worker's uid in a user namespace when not. Needs slirp4netns and /dev/net/tun
   * (unless `isolationEgress: false`), and without root bwrap and unprivileged user namespaces.
   * `auto`: as `session`. Either way a worker that cannot keep sessions apart refuses to start
   * (`SessionsApartUnavailableError`, whose line names what is missing and how to install it).
   * `none`: commands run as the worker's user, see its processes and reach the Temporal server, as
   * the start line says; only when asked. Not with the sandbox (the stricter mode).
   * @default 'auto'
   */
  isolation?: 'auto' | 'none' | 'session';
  /** The uids sessions get with `isolation: 'session'`. @default { first: 1879048192, count: 1000000 } */
  isolationUids?: UidRange;
  /**
   * With isolation: whether commands reach the network beyond their session's localhost (through
   * slirp4netns, never the host's loopback). @default true
   */
  isolationEgress?: boolean;
  /**
   * With isolation: ports of the host's loopback that commands may reach, at 127.0.0.1:<port> in
   * their session's network (a database, a package cache). Allowing the Temporal server's port gives
   * commands what the worker has. @default []
   */
  isolationAllowedPorts?: number[];
  /**
   * With isolation: the network namespace sessions' traffic leaves from (a file, as `ip netns`
   * makes), whose loopback is then "the host's". @default the worker's own
   */
  isolationEgressNetns?: string;
  /**
   * Refused: a worker given `true` does not start. The sandbox shared the host's network, where
   * commands reach the Temporal server; commands that need a network keep sessions apart instead
   * (`isolation: 'session'`), each session's network refusing the control plane. @default false
   */
  sandboxNetwork?: boolean;
  /** With the sandbox: more paths commands may write (a cache, a home directory). @default [] */
  sandboxWritable?: string[];
  /**
   * With the sandbox: paths commands may not even read (the worker's TLS key files, say). The spill
   * directory is always hidden. @default []
   */
  sandboxHidden?: string[];
  /**
   * Supervisors kept ready for the next commands, their cgroups made and their process in them
   * (docs/SUPERVISOR.md "The nursery"); 0 still starts supervisors through the nursery, one at a
   * time as commands come. Not without an output cap: then the worker spawns each supervisor itself.
   * @default 2
   */
  warmSupervisors?: number;
}

/**
 * `ExecutorOptions` compiled: every default filled and every value checked, durations in ms and
 * sizes in bytes. Nothing of the host in it yet: the limits, sandbox and isolation asked for are
 * what `setUpExecutor` tries on the host.
 */
export interface CompiledExecutorOptions {
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  defaultWorkdir: string;
  /** Declared workdir roots, resolved (not yet checked on the host: `setUpExecutor` does). */
  workdirRoots: readonly string[];
  outputLimitBytes: number;
  spillDir: string;
  workspaceDir: string;
  spillRetentionMs: number;
  secretEnv: readonly string[];
  commandTaskQueue: string;
  /** The queue this worker serves (workflows, and commands unless `commandTaskQueue` differs). */
  taskQueue: string;
  hostId: string;
  /** This worker's own queue on its host (see `hostTaskQueue`). */
  hostQueue: string;
  lostAfterMs: number;
  heartbeatTimeoutMs: number;
  /** The limits asked for each task; `ExecutorConfig.containment` says which the host enforces. */
  wantedLimits: TaskLimits;
  /** Tasks are kept together by the supervisor's process tree, never a cgroup (`containment: 'process-tree'`). */
  processTreeOnly: boolean;
  spillQuotaBytes: number;
  sessionDiskCapBytes: number;
  envAllowlist: readonly string[] | undefined;
  nonInteractiveDefaults: boolean;
  /** Set when commands are to run in the bwrap sandbox. */
  sandboxOptions: SandboxOptions | undefined;
  /** Whether sessions are to be kept apart. */
  isolationRequest: IsolationRequest;
  /** The deny rules, when there are any. */
  denyCommands?: CompiledRules;
  warmSupervisors: number;
}

/** Whether sessions are to be kept apart, as the options ask. */
export type IsolationRequest =
  /** The sandbox, stricter, stands alone: nothing to say of isolation. */
  | { kind: 'sandbox' }
  /** None, as asked (`isolation: 'none'`). */
  | { kind: 'none' }
  /** Sessions apart (`auto` or `session`), or else the worker refuses to start. */
  | { kind: 'session'; options: SessionIsolationOptions };

/** What the command activities run with: the compiled options, and what the host set up for them. */
export interface ExecutorConfig extends CompiledExecutorOptions {
  /** How tasks are contained here, and the limits in force (what the host can enforce). */
  containment: Containment;
  /** Set when commands run in the bwrap sandbox. */
  sandbox: Sandbox | undefined;
  /** Set when sessions are kept apart. */
  isolation: SessionIsolation | undefined;
  /** Set when sessions are kept apart: their disk caps, and their directories for the spill quota. */
  sessionDisk?: SessionDisk | undefined;
  /** What the worker says at start about isolation: in force, or what is not isolated and why. */
  isolationSummary: string;
  /** The environments its commands get, read when the worker was set up (`commandEnvs`). */
  commandEnvs: CommandEnvs;
}

/** The two environments a worker's commands get. */
export interface CommandEnvs {
  /** A command without a terminal's. */
  plain: NodeJS.ProcessEnv;
  /** A terminal task's. */
  terminal: NodeJS.ProcessEnv;
}

/**
 * Fills the defaults of `options` and checks them: a value out of range throws one line naming the
 * option. Reads only what the defaults are made of (the process's cwd and uid, the temporary
 * directory, the host's memory, and for the host id its name and machine id); probes nothing.
 */
export function compileExecutorOptions(options: ExecutorOptions, taskQueue: string): CompiledExecutorOptions {
  const maxTimeoutMs = positiveOption('maxTimeoutMs', options.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_MS);
  const defaultTimeoutMs = Math.min(
    positiveOption('defaultTimeoutMs', options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS),
    maxTimeoutMs,
  );
  const uid = process.getuid?.() ?? 'user';
  const spillDir = path.resolve(options.spillDir ?? path.join(os.tmpdir(), `durable-bash-${uid}`));
  const workspaceDir = path.resolve(
    options.workspaceDir ?? path.join(os.tmpdir(), `durable-bash-workspaces-${uid}`),
  );
  if (`${workspaceDir}/`.startsWith(`${spillDir}/`) || `${spillDir}/`.startsWith(`${workspaceDir}/`)) {
    throw new TypeError(
      `invalid workspaceDir: expected a directory apart from the spill directory ${spillDir}, got ${workspaceDir}`,
    );
  }
  if (options.sandboxNetwork) throw new TypeError(SANDBOX_NETWORK_REFUSED);
  const commandTaskQueue = options.commandTaskQueue ?? taskQueue;
  const hostId = options.hostId ?? defaultHostId(spillDir);
  const spillQuotaBytes = positiveOption(
    'spillQuotaBytes',
    options.spillQuotaBytes ?? DEFAULT_SPILL_QUOTA_BYTES,
  );
  if (!/^[\w.@-]{1,100}$/.test(hostId)) {
    throw new TypeError(
      `invalid hostId: expected 1-100 letters, digits, '.', '@', '_' or '-', got ${hostId}`,
    );
  }
  return {
    defaultTimeoutMs,
    maxTimeoutMs,
    defaultWorkdir: path.resolve(options.defaultWorkdir ?? process.cwd()),
    workdirRoots: (options.workdirRoots ?? []).map((root) => path.resolve(root)),
    outputLimitBytes: positiveOption(
      'outputLimitBytes',
      options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES,
    ),
    spillDir,
    workspaceDir,
    spillRetentionMs: positiveOption(
      'spillRetentionMs',
      options.spillRetentionMs ?? DEFAULT_SPILL_RETENTION_MS,
    ),
    secretEnv: options.secretEnv ?? [],
    commandTaskQueue,
    taskQueue,
    hostId,
    hostQueue: hostTaskQueue(taskQueue, hostId),
    lostAfterMs: positiveOption('lostAfterMs', options.lostAfterMs ?? DEFAULT_LOST_AFTER_MS),
    heartbeatTimeoutMs: positiveOption(
      'heartbeatTimeoutMs',
      options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS,
    ),
    wantedLimits: {
      outputBytesPerStream: positiveOption(
        'maxOutputBytesPerStream',
        options.maxOutputBytesPerStream ?? DEFAULT_MAX_OUTPUT_BYTES_PER_STREAM,
      ),
      processes: positiveOption('maxProcesses', options.maxProcesses ?? DEFAULT_MAX_PROCESSES),
      memoryBytes: positiveOption('maxMemoryBytes', options.maxMemoryBytes ?? defaultMaxMemoryBytes()),
    },
    processTreeOnly: options.containment === 'process-tree',
    spillQuotaBytes,
    sessionDiskCapBytes: positiveOption(
      'sessionDiskCapBytes',
      options.sessionDiskCapBytes ?? Math.max(1, Math.floor(spillQuotaBytes / SESSION_DISK_CAP_SHARE)),
    ),
    envAllowlist: options.envAllowlist,
    nonInteractiveDefaults: options.nonInteractiveDefaults ?? true,
    sandboxOptions:
      options.sandbox === 'bwrap'
        ? {
            writable: options.sandboxWritable ?? [],
            hidden: options.sandboxHidden ?? [],
          }
        : undefined,
    isolationRequest: isolationRequestOf(options),
    ...(options.denyCommands?.length ? { denyCommands: compileDenyRules(options.denyCommands) } : {}),
    warmSupervisors: warmCount(options.warmSupervisors ?? DEFAULT_WARM_SUPERVISORS),
  };
}

/** Why a worker asked for the sandbox with the host's network does not start. */
export const SANDBOX_NETWORK_REFUSED =
  "sandboxNetwork (--sandbox-network) is refused: the host's network gives commands the Temporal server; for commands with a network, keep sessions apart (--isolation session), whose networks refuse it";

/** Half the host's memory, in whole MiB: one task can never take the worker's and the others'. */
function defaultMaxMemoryBytes(): number {
  const mib = 1024 * 1024;
  return Math.floor(os.totalmem() / 2 / mib) * mib;
}

/**
 * A session's disk cap by default is the spill quota over this: one session never holds more than
 * a quarter of what the host keeps, and one at its cap still leaves three quarters for the output
 * other sessions' reads name.
 */
const SESSION_DISK_CAP_SHARE = 4;

const DEFAULT_WARM_SUPERVISORS = 2;
/** The nursery keeps at most this many warm. */
const MAX_WARM_SUPERVISORS = 16;

function warmCount(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_WARM_SUPERVISORS) {
    throw new TypeError(
      `invalid warmSupervisors: expected a whole number from 0 to ${MAX_WARM_SUPERVISORS}, got ${value}`,
    );
  }
  return value;
}

/**
 * Sessions apart unless told `none` (`auto`, the default, and `session` alike), with the sessions'
 * options. The sandbox, stricter, stands alone.
 */
function isolationRequestOf(options: ExecutorOptions): IsolationRequest {
  if (options.sandbox === 'bwrap') return { kind: 'sandbox' };
  if (options.isolation === 'none') return { kind: 'none' };
  return {
    kind: 'session',
    options: {
      hidden: options.sandboxHidden ?? [],
      ...(options.isolationUids ? { uids: options.isolationUids } : {}),
      ...(options.isolationEgress === false ? { egress: false } : {}),
      ...(options.isolationAllowedPorts ? { allowedPorts: options.isolationAllowedPorts } : {}),
      ...(options.isolationEgressNetns ? { egressNetns: options.isolationEgressNetns } : {}),
      ...(options.spillRetentionMs !== undefined ? { retentionMs: options.spillRetentionMs } : {}),
    },
  };
}
