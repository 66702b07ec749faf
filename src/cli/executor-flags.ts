import type { Command } from 'commander';
import type { ExecutorOptions } from '../activities/index.js';
import { positiveInt } from './options.js';

/** Flags for a worker's executor config (timeouts, workdir, output limit, spill directory). */
export function withExecutorOptions(command: Command): Command {
  return command
    .option('--workdir <dir>', "default workdir for commands (default: the worker's cwd)")
    .option('--default-timeout-ms <ms>', 'foreground timeout when a call gives none', positiveInt)
    .option('--max-timeout-ms <ms>', 'cap on a foreground timeout', positiveInt)
    .option('--output-limit-bytes <n>', 'bytes of each stream kept in a result', positiveInt)
    .option('--spill-dir <dir>', 'private directory for complete output files')
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
    );
}

export interface ExecutorFlags {
  workdir?: string;
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  outputLimitBytes?: number;
  spillDir?: string;
  spillRetentionMs?: number;
  hostId?: string;
  lostAfterMs?: number;
}

export function executorOptions(flags: ExecutorFlags): ExecutorOptions {
  return {
    ...(flags.workdir !== undefined ? { defaultWorkdir: flags.workdir } : {}),
    ...(flags.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: flags.defaultTimeoutMs } : {}),
    ...(flags.maxTimeoutMs !== undefined ? { maxTimeoutMs: flags.maxTimeoutMs } : {}),
    ...(flags.outputLimitBytes !== undefined ? { outputLimitBytes: flags.outputLimitBytes } : {}),
    ...(flags.spillDir !== undefined ? { spillDir: flags.spillDir } : {}),
    ...(flags.spillRetentionMs !== undefined ? { spillRetentionMs: flags.spillRetentionMs } : {}),
    ...(flags.hostId ? { hostId: flags.hostId } : {}),
    ...(flags.lostAfterMs !== undefined ? { lostAfterMs: flags.lostAfterMs } : {}),
  };
}
