/**
 * The command activity's machinery: one attempt at a task's command, from the host's records to
 * its end. It starts the command under a supervisor only when no supervisor ever claimed the task
 * (supervisor/command-start.ts), else re-attaches, then follows it (supervisor/command-follow.ts).
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import { loadBashGrammar } from '../policy/bash-grammar.js';
import { lateStartRefusal } from '../shared/foreground-deadline.js';
import { AttemptFailureType, type CommandOutcome, type CommandSpec } from '../shared/task.js';
import type { AttachedAttempt, AttachedTasks, TaskRuns } from './attached-tasks.js';
import type { ExecutorConfig } from './executor-config.js';
import { hostMetrics } from './host-metrics.js';
import type { MonitorSink } from './monitor/line-monitor.js';
import { ensurePrivateDir } from './spill/spill-files.js';
import { SpillSweeper } from './spill/spill-sweeper.js';
import { AttemptRecords } from './supervisor/attempt-records.js';
import { commandLost, LostReason, withLastOutput } from './supervisor/command-end.js';
import { type FollowHost, followCommand } from './supervisor/command-follow.js';
import { startSupervised } from './supervisor/command-start.js';
import { thisProcess } from './supervisor/process-identity.js';
import { exitWatchOf, type SupervisorNursery } from './supervisor/supervisor-nursery.js';
import { readRecord } from './supervisor/supervisor-records.js';
import { taskFiles } from './supervisor/task-files.js';
import { assertWorkdir } from './workdir.js';
import { markWorkspaceUsed } from './workspace/workspace-use.js';

/**
 * Runs one command to its end, exactly once per task on this host, whichever attempt this is. The
 * first attempt starts a supervisor (which claims the task exclusively before the command starts);
 * any later attempt (after a worker restart) re-attaches to it, or returns the end it recorded, and
 * never starts the command again.
 */
export class CommandRunner {
  private readonly sweeper: SpillSweeper;
  private readonly attempts: AttemptRecords;
  private readonly follow: FollowHost;

  constructor(
    private readonly config: ExecutorConfig,
    runs: TaskRuns,
    private readonly attached: AttachedTasks,
    private readonly nursery?: SupervisorNursery,
    monitors?: MonitorSink,
  ) {
    this.sweeper = new SpillSweeper(config);
    this.attempts = new AttemptRecords(config.spillDir);
    // The deny rules read commands with the bash grammar: load it now, not on the first command (a
    // failure here shows again, as the command's own, when a command is checked).
    if (config.denyCommands) loadBashGrammar().catch(() => undefined);
    this.follow = {
      config,
      runs,
      terminals: attached.terminals,
      watch: nursery && exitWatchOf(nursery),
      ...(monitors ? { monitors } : {}),
    };
  }

  /** One attempt at `spec`'s command, in the activity `context`; held attached to its task while it runs. */
  async run(spec: CommandSpec, context: Context): Promise<CommandOutcome> {
    // An attempt on a shared queue that another host's worker took: that host has no records of
    // this task. Refuse before anything starts; the workflow goes on on the host's own queue.
    if (spec.hostQueue !== undefined && spec.hostQueue !== this.config.hostQueue) {
      throw ApplicationFailure.retryable(
        `this worker is not the host of task ${spec.taskId}`,
        AttemptFailureType.wrongHost,
      );
    }
    return this.attached.hold(spec.taskId, context.info.workflowExecution?.runId ?? '', async (attempt) => {
      if (spec.background) attempt.monitorable = spec.monitor !== undefined;
      // Each step at DEBUG (DURABLE_BASH_LOG_LEVEL=DEBUG): where an attempt stopped, when one goes quiet.
      context.log.debug('command attempt started', { taskId: spec.taskId });
      return this.runAttempt(spec, attempt, context);
    });
  }

  private async runAttempt(
    spec: CommandSpec,
    attempt: AttachedAttempt,
    context: Context,
  ): Promise<CommandOutcome> {
    const { config, sweeper } = this;
    await ensurePrivateDir(config.spillDir);
    // Housekeeping must never hold up or fail a command; a failed sweep is retried later.
    sweeper.sweepIfDue().catch(() => undefined);
    const files = taskFiles(config.spillDir, spec.taskId);
    // First, so a task of a newer release's files is refused before this worker writes any of them.
    let record = await readRecord(files.state);
    // A start's workdir check: its stat waits for libuv's thread pool, so it is sent there now and
    // runs while the attempt is recorded (0.1-0.3 ms less before the launch).
    const workdirChecked = record === undefined ? assertWorkdir(spec.workdir) : Promise.resolve();
    // Awaited only on the way to the launch: a refusal before it ends the attempt instead.
    workdirChecked.catch(() => undefined);
    // Before anything starts, so a restarted worker can find this attempt (see the orphan scan).
    const { info } = context;
    this.attempts.remember(files, {
      namespace: info.activityNamespace,
      hostQueue: config.hostQueue,
      taskToken: Buffer.from(info.taskToken).toString('base64'),
      worker: thisProcess(),
      workdir: spec.workdir,
    });
    markWorkspaceUsed(config.workspaceDir, spec.workdir);
    context.log.debug('command attempt remembered', { taskId: spec.taskId });
    let exited: Promise<void> | undefined;
    if (record === undefined) {
      // An earlier attempt heartbeated (or the workflow knows it started), so the command ran: its records were lost
      // (spill directory wiped or replaced). Starting it again would run it twice.
      if (info.heartbeatDetails !== undefined || spec.commandStarted)
        throw commandLost(LostReason.recordsGone, info.heartbeatDetails);
      // A foreground run whose deadline passed while no worker took it never starts (by this host's
      // clock, which NTP keeps within milliseconds of the server's). One that arrives just past it
      // starts, and its deadline ends it at once, as a workflow timer raced the start before.
      const refusal = lateStartRefusal(spec, Date.now());
      if (refusal !== undefined) throw refusal;
      ({ exited } = await startSupervised(config, this.nursery, spec, files, workdirChecked));
      // The next attempts' records, made once this one's run no longer needs the CPU.
      this.attempts.refillSoon();
      record = await readRecord(files.state);
      if (record === undefined) throw commandLost(LostReason.supervisorKilledBeforeStart);
      if (exited !== undefined) hostMetrics.commandStarted();
    } else {
      hostMetrics.reattached();
    }
    sweeper.active.add(files.stdout).add(files.stderr);
    try {
      const claimed = record;
      return await followCommand(this.follow, { spec, files, claimed, exited, attempt, context }).catch(
        (err: unknown) => withLastOutput(err, files, claimed, config.hostQueue),
      );
    } finally {
      sweeper.active.delete(files.stdout);
      sweeper.active.delete(files.stderr);
    }
  }
}
