import { WorkflowNotFoundError } from '@temporalio/client';
import { BackgroundQuotaError } from '../shared/errors.js';
import type { TaskId } from '../shared/task.js';
import type { BashTasks } from './bash-tasks.js';
import { SessionCap } from './session-cap.js';

/** How long asking whether a just-started task runs may take. */
const DESCRIBE_TIMEOUT_MS = 10_000;

/** Listed beyond the limit, for the session's foreground runs among its running tasks (not counted). */
const FOREGROUND_SLACK = 50;

/**
 * The cap on a session's running background tasks. The count is the session's running `bashTask`
 * workflows in visibility (the owner search attribute, `ExecutionStatus = 'Running'`) but its
 * foreground runs (the memo says which; a run moved to the background counts), plus the
 * tasks this process started for the session lately that visibility does not list yet (it may
 * lag a start by a moment on a real cluster), each confirmed running by `describe()`. Checks and
 * starts of one session take turns within this process (`SessionCap`), so a burst from one agent
 * host (or one command worker starting approved runs) never exceeds the limit; two processes
 * starting for the same session at the same moment can, by the few tasks each started within the
 * other's visibility lag. A foreground run's move to the background (`autoBackgroundAfterMs`)
 * takes a turn too: at the limit the run stays in the foreground.
 */
export class BackgroundQuota {
  private readonly cap: SessionCap;

  /** `limit`: the cap this agent host sets; a start may name another (an approved run carries its host's). */
  constructor(
    private readonly tasks: BashTasks,
    readonly limit: number,
  ) {
    checkLimit(limit);
    this.cap = new SessionCap({
      listed: async (sessionId, atLeast) => {
        const listed = await tasks.list({ owner: sessionId, running: true }, atLeast + FOREGROUND_SLACK);
        // Foreground runs are not background tasks (a run moved to the background is, by its memo).
        return listed.filter((task) => task.background !== false).map((task) => task.taskId);
      },
      counts: (taskId) => this.isRunning(taskId),
    });
  }

  /**
   * Runs `start` (which starts one background task of the session) when the session runs fewer
   * than `limit` tasks; otherwise throws `BackgroundQuotaError` and starts nothing.
   */
  async start(sessionId: string, start: () => Promise<TaskId>, limit = this.limit): Promise<TaskId> {
    checkLimit(limit);
    const started = await this.cap.startWithin(sessionId, limit, start, (taskId) => taskId);
    if ('atLimit' in started) throw new BackgroundQuotaError(started.atLimit, limit);
    return started.started;
  }

  /**
   * Runs `move` (which moves a foreground run of the session to the background) when the session
   * runs fewer than `limit` background tasks. False when it is at the limit (the run stays in the
   * foreground) or the move did not happen.
   */
  move(sessionId: string, taskId: TaskId, move: () => Promise<boolean>): Promise<boolean> {
    return this.cap.inTurn(sessionId, async () => {
      if ((await this.cap.count(sessionId, this.limit)) >= this.limit) return false;
      const moved = await move();
      if (moved) this.cap.startedNow(sessionId, taskId);
      return moved;
    });
  }

  /** Whether a task's workflow runs; one that cannot be described counts as running. */
  private async isRunning(taskId: string): Promise<boolean> {
    try {
      const description = await this.tasks.client.withDeadline(Date.now() + DESCRIBE_TIMEOUT_MS, () =>
        this.tasks.client.workflow.getHandle(taskId).describe(),
      );
      return description.status.name === 'RUNNING';
    } catch (err) {
      return !(err instanceof WorkflowNotFoundError);
    }
  }
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`maxBackgroundTasksPerSession must be a positive integer or Infinity, got ${limit}`);
  }
}
