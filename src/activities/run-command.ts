/** The command activity: one attempt at running a task's command on this host (`CommandRunner`). */
import { Context } from '@temporalio/activity';
import type { AttachedTasks, TaskRuns } from '../command-host/attached-tasks.js';
import { CommandRunner } from '../command-host/command-runner.js';
import type { ExecutorConfig } from '../command-host/executor-config.js';
import type { MonitorSink } from '../command-host/monitor/line-monitor.js';
import type { SupervisorNursery } from '../command-host/supervisor/supervisor-nursery.js';
import type { CommandOutcome, CommandSpec } from '../shared/task.js';

/**
 * Runs one command to its end, exactly once per task on this host, whichever attempt this is. The
 * first attempt starts a supervisor (which claims the task exclusively before the command starts);
 * any later attempt (after a worker restart) re-attaches to it, or returns the end it recorded, and
 * never starts the command again. Output goes to spill files and is heartbeated. A kill or timeout
 * from the workflow ends the process group and still returns the outcome; a worker shutdown leaves
 * the command running for the next attempt; a closed workflow run ends it. The end returned is kept
 * until the server is seen holding it.
 */
export function createRunCommand(
  config: ExecutorConfig,
  runs: TaskRuns,
  attached: AttachedTasks,
  nursery?: SupervisorNursery,
  monitors?: MonitorSink,
) {
  const runner = new CommandRunner(config, runs, attached, nursery, monitors);
  return async function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
    const context = Context.current();
    const outcome = await runner.run(spec, context);
    // Kept until the server is seen holding it: the SDK sends it once (see ReportedEnds).
    const { info } = context;
    const runId = info.workflowExecution?.runId;
    if (runId !== undefined)
      attached.reportedEnds.add({
        taskId: spec.taskId,
        runId,
        activityId: info.activityId,
        attempt: info.attempt,
        taskToken: info.taskToken,
        outcome,
        reportedAtMs: Date.now(),
      });
    return outcome;
  };
}
