import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import type { DenyRule } from '../policy/policy-types.js';
import { denyRuleFromFlag } from '../policy/rules.js';
import { collectRepeated, positiveInt } from './options.js';

/** Flags for a worker's executor config (timeouts, workdir, output limit, spill directory). */
export function withExecutorOptions(command: Command): Command {
  return command
    .option('--workdir <dir>', "default workdir for commands (default: the worker's cwd)")
    .option(
      '--workdir-root <dir>',
      "with sessions apart or the sandbox: a directory whose subdirectories of the worker's own user are handed to a session that names them as its workdir, writable (repeatable; dev: its cwd)",
      collectRepeated,
    )
    .option('--default-timeout-ms <ms>', 'foreground timeout when a call gives none', positiveInt)
    .option('--max-timeout-ms <ms>', 'cap on a foreground timeout', positiveInt)
    .option('--output-limit-bytes <n>', 'bytes of each stream kept in a result', positiveInt)
    .option('--spill-dir <dir>', 'private directory for complete output files')
    .option(
      '--workspace-dir <dir>',
      "where sandbox sessions' workspaces live (default: <tmpdir>/durable-bash-workspaces-<uid>)",
    )
    .option(
      '--spill-retention-ms <ms>',
      'keep a finished spill file this long after its last write',
      positiveInt,
    )
    .option(
      '--host-id <id>',
      "this host's stable identity, naming its own task queue (env DURABLE_BASH_HOST_ID; default: from the machine id and spill dir)",
      process.env.DURABLE_BASH_HOST_ID,
    )
    .option(
      '--lost-after-ms <ms>',
      'how long a task waits for a worker on its host to come back before it ends lost (default: 10 minutes)',
      positiveInt,
    )
    .option(
      '--heartbeat-timeout-ms <ms>',
      "without a heartbeat for this long a command's worker counts as gone; commands heartbeat every 2/5 of it, at most every 2 minutes (default: 300 s)",
      positiveInt,
    )
    .option(
      '--max-output-bytes-per-stream <n>',
      "bytes of a task's stdout and of its stderr kept; later writes fail (default: 1 GiB)",
      positiveInt,
    )
    .option(
      '--max-processes <n>',
      'processes and threads per task, with a cgroup (default: 4096)',
      positiveInt,
    )
    .option(
      '--max-memory-bytes <n>',
      "memory per task, with a cgroup (default: half the host's memory)",
      positiveInt,
    )
    .addOption(
      new Option(
        '--containment <kind>',
        'keep a task together with a cgroup per task, or only its process tree',
      )
        .choices(['auto', 'process-tree'])
        .default('auto'),
    )
    .option(
      '--spill-quota-bytes <n>',
      "spill files kept on this host; the oldest ended tasks' go first (default: 20 GiB)",
      positiveInt,
    )
    .option(
      '--session-disk-cap-bytes <n>',
      "a session's /tmp, /var/tmp, home and output on this host, with sessions apart; past it its tasks end (default: a quarter of the spill quota)",
      positiveInt,
    )
    .option(
      '--env-allow <name>',
      'pass commands only these variables (a name, or a prefix ending in *; repeatable)',
      collectRepeated,
    )
    .option(
      '--no-non-interactive-defaults',
      'give commands none of the variables that keep them from waiting for a person (PAGER=cat, GIT_TERMINAL_PROMPT=0, ...)',
    )
    .addOption(
      new Option('--sandbox <kind>', 'run commands in a bubblewrap sandbox (fails closed)')
        .choices(['none', 'bwrap'])
        .default('none'),
    )
    .addOption(
      new Option(
        '--isolation <mode>',
        "auto (the same) or session: each session's commands in their own PID namespace and network, as their own uid with root, or the worker refuses to start (docs/CONTAINMENT.md); none: commands run as the worker",
      )
        .choices(['auto', 'none', 'session'])
        .default('auto'),
    )
    .option(
      '--allow-host-port <port>',
      "with isolation: a port of the host's loopback commands may reach, at localhost:<port> (repeatable)",
      (value: string, previous: number[] = []) => [...previous, portNumber(value)],
    )
    .option(
      '--no-session-egress',
      "with isolation: commands reach no network but their session's localhost (and allowed host ports)",
    )
    .option(
      '--sandbox-network',
      "refused: the host's network gives commands the Temporal server (for a network, keep sessions apart)",
    )
    .option(
      '--sandbox-writable <path>',
      'with --sandbox bwrap: another path commands may write (repeatable)',
      collectRepeated,
    )
    .option(
      '--sandbox-hide <path>',
      'with --sandbox bwrap or --isolation session: a path commands may not read, like TLS key files (repeatable)',
      collectRepeated,
    )
    .option(
      '--deny <rule>',
      'refuse commands that start with these words, or match /regex/ (repeatable; text rules, not a sandbox)',
      collectDenyRule,
    );
}

function portNumber(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 1 || port > 65535)
    throw new InvalidArgumentError(`expected a port from 1 to 65535, got ${value}`);
  return port;
}

function collectDenyRule(value: string, previous: DenyRule[] = []): DenyRule[] {
  try {
    return [...previous, denyRuleFromFlag(value)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

export interface ExecutorFlags {
  workdir?: string;
  workdirRoot?: string[];
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  outputLimitBytes?: number;
  spillDir?: string;
  workspaceDir?: string;
  spillRetentionMs?: number;
  hostId?: string;
  lostAfterMs?: number;
  heartbeatTimeoutMs?: number;
  deny?: DenyRule[];
  maxOutputBytesPerStream?: number;
  maxProcesses?: number;
  maxMemoryBytes?: number;
  containment?: 'auto' | 'process-tree';
  spillQuotaBytes?: number;
  sessionDiskCapBytes?: number;
  envAllow?: string[];
  sandbox?: 'none' | 'bwrap';
  isolation?: 'auto' | 'none' | 'session';
  allowHostPort?: number[];
  /** false with --no-session-egress. */
  sessionEgress?: boolean;
  /** false with --no-non-interactive-defaults. */
  nonInteractiveDefaults?: boolean;
  sandboxNetwork?: boolean;
  sandboxWritable?: string[];
  sandboxHide?: string[];
}

export function executorOptions(flags: ExecutorFlags): ExecutorOptions {
  return {
    ...(flags.workdir !== undefined ? { defaultWorkdir: flags.workdir } : {}),
    ...(flags.workdirRoot !== undefined ? { workdirRoots: flags.workdirRoot } : {}),
    ...(flags.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: flags.defaultTimeoutMs } : {}),
    ...(flags.maxTimeoutMs !== undefined ? { maxTimeoutMs: flags.maxTimeoutMs } : {}),
    ...(flags.outputLimitBytes !== undefined ? { outputLimitBytes: flags.outputLimitBytes } : {}),
    ...(flags.spillDir !== undefined ? { spillDir: flags.spillDir } : {}),
    ...(flags.workspaceDir !== undefined ? { workspaceDir: flags.workspaceDir } : {}),
    ...(flags.spillRetentionMs !== undefined ? { spillRetentionMs: flags.spillRetentionMs } : {}),
    ...(flags.hostId ? { hostId: flags.hostId } : {}),
    ...(flags.lostAfterMs !== undefined ? { lostAfterMs: flags.lostAfterMs } : {}),
    ...(flags.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: flags.heartbeatTimeoutMs } : {}),
    ...(flags.deny !== undefined ? { denyCommands: flags.deny } : {}),
    ...(flags.maxOutputBytesPerStream !== undefined
      ? { maxOutputBytesPerStream: flags.maxOutputBytesPerStream }
      : {}),
    ...(flags.maxProcesses !== undefined ? { maxProcesses: flags.maxProcesses } : {}),
    ...(flags.maxMemoryBytes !== undefined ? { maxMemoryBytes: flags.maxMemoryBytes } : {}),
    ...(flags.containment !== undefined ? { containment: flags.containment } : {}),
    ...(flags.spillQuotaBytes !== undefined ? { spillQuotaBytes: flags.spillQuotaBytes } : {}),
    ...(flags.sessionDiskCapBytes !== undefined ? { sessionDiskCapBytes: flags.sessionDiskCapBytes } : {}),
    ...(flags.envAllow !== undefined ? { envAllowlist: flags.envAllow } : {}),
    ...(flags.nonInteractiveDefaults === false ? { nonInteractiveDefaults: false } : {}),
    ...(flags.sandbox !== undefined ? { sandbox: flags.sandbox } : {}),
    ...(flags.isolation !== undefined ? { isolation: flags.isolation } : {}),
    ...(flags.allowHostPort !== undefined ? { isolationAllowedPorts: flags.allowHostPort } : {}),
    ...(flags.sessionEgress === false ? { isolationEgress: false } : {}),
    ...(flags.sandboxNetwork ? { sandboxNetwork: true } : {}),
    ...(flags.sandboxWritable !== undefined ? { sandboxWritable: flags.sandboxWritable } : {}),
    ...(flags.sandboxHide !== undefined ? { sandboxHidden: flags.sandboxHide } : {}),
  };
}
