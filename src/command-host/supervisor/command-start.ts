/**
 * Starting a task's command under a new supervisor: the checks before anything runs (the worker's
 * deny rules, the workdir), the launcher of its containment, then a warm supervisor of the nursery
 * or one spawned here, writing to the task's spill files.
 */
import type { FileHandle } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { restartLine } from '../../shared/host-restart.js';
import { type CommandSpec, RunFailureType } from '../../shared/task.js';
import { taskCgroups } from '../containment/cgroups.js';
import { commandLaunch } from '../containment/command-launch.js';
import { assertCommandAllowed } from '../containment/deny-commands.js';
import type { ExecutorConfig } from '../executor-config.js';
import { hostMetrics } from '../host-metrics.js';
import { cleanupEnv } from '../spill/session-disk.js';
import { openSpillWriter } from '../spill/spill-files.js';
import { type SpawnReport, spawnSupervisor } from './supervisor.js';
import type { SupervisorNursery } from './supervisor-nursery.js';
import type { TaskFiles } from './task-files.js';

/**
 * Starts the command under a new supervisor. `exited` is the supervisor's exit, or undefined when
 * another attempt's supervisor had claimed the task first (attach to that one). `workdirChecked` is
 * `assertWorkdir` of the spec's workdir, begun by the caller before its own records.
 */
export async function startSupervised(
  config: ExecutorConfig,
  nursery: SupervisorNursery | undefined,
  spec: CommandSpec,
  files: TaskFiles,
  workdirChecked: Promise<void>,
): Promise<{ exited: Promise<void> | undefined }> {
  await assertCommandAllowed(spec.command, config.denyCommands);
  await workdirChecked;
  // The launcher and the inner supervisor the command runs under, if any.
  const { cleanup, ...launched } = await commandLaunch(config, spec);
  const { plain, terminal } = config.commandEnvs;
  const env = spec.terminal !== undefined ? terminal : plain;
  // The nursery's warm supervisors start no terminal: a terminal task's supervisor is spawned. Nor
  // a restart: its first line goes into the spill file before the command's output, through the
  // descriptor the spawned supervisor then writes on from (a warm one opens the file itself).
  if (nursery && !spec.terminal && !spec.restart) {
    // The nursery's supervisor opens the spill files itself (and checks them as openSpillWriter does).
    const report = await nursery.launch({
      files,
      command: spec.command,
      cwd: spec.workdir,
      env: cleanup ? cleanupEnv(env) : env,
      ...(spec.keepStdinOpen ? { keepStdinOpen: true } : {}),
      ...launched,
    });
    return { exited: startedOrThrow(report) };
  }
  const writers: FileHandle[] = [];
  try {
    writers.push(await openSpillWriter(files.stdout), await openSpillWriter(files.stderr));
    const [stdoutFile, stderrFile] = writers as [FileHandle, FileHandle];
    if (spec.restart) await stdoutFile.write(restartLine(config.hostId, spec.restart.lostHostId));
    const report = await spawnSupervisor({
      files,
      command: spec.command,
      cwd: spec.workdir,
      env: cleanup ? cleanupEnv(env) : env,
      cgroups: taskCgroups(config.containment, spec.taskId),
      limits: config.containment.limits,
      ...(launched.launcher ? { ...launched, binary: launched.innerBinary } : {}),
      stdoutFd: stdoutFile.fd,
      stderrFd: stderrFile.fd,
      ...(spec.keepStdinOpen ? { keepStdinOpen: true } : {}),
      ...(spec.terminal ? { terminal: spec.terminal } : {}),
    });
    return { exited: startedOrThrow(report) };
  } finally {
    await Promise.all(writers.map((writer) => writer.close().catch(() => undefined)));
  }
}

/** The supervisor's exit when it started the command, undefined when another held the task; a spawn that failed is the task's end. */
function startedOrThrow(report: SpawnReport): Promise<void> | undefined {
  if (report.kind === 'error') {
    hostMetrics.supervisorStartFailed();
    throw ApplicationFailure.create({
      type: RunFailureType.spawnFailed,
      message: `could not start bash: ${report.message}`,
      nonRetryable: true,
    });
  }
  return report.kind === 'started' ? report.exited : undefined;
}
