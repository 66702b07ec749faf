import { WorkflowNotFoundError } from '@temporalio/client';
import { BackgroundQuotaError } from '../shared/errors.js';
import { QUOTA_RECENT_START_MS } from '../shared/limits.js';
import type { TaskId } from '../shared/task.js';
import type { BashTasks } from './bash-tasks.js';

/** How long asking whether a just-started task runs may take. */
const DESCRIBE_TIMEOUT_MS = 10_000;

/** Listed beyond the limit, for the session's foreground runs among its running tasks (not counted). */
const FOREGROUND_SLACK = 50;

/**
 * The cap on a session's running background tasks. The count is the session's running `bashTask`
 * workflows in visibility (the owner search attribute, `ExecutionStatus = 'Running'`) but its
 * foreground runs (the memo says which; a run moved to the background counts), plus the
 * tasks this agent host started for the session lately that visibility does not list yet (it may
 * lag a start by a moment on a real cluster), each confirmed running by `describe()`. Checks and
 * starts of one session take turns within this process, so a burst from one agent host never
 * exceeds the limit; two agent hosts starting for the same session at the same moment can, by
 * the few tasks each started within the other's visibility lag. A foreground run's move to the
 * background (`autoBackgroundAfterMs`) takes a turn too: at the limit the run stays in the foreground.
 */
export class BackgroundQuota {
  /** The last check-and-start of each session, which the next one waits for. */
  private readonly turns = new Map<string, Promise<void>>();
  /** Per session, the tasks started here lately and when. */
  private readonly recent = new Map<string, Map<TaskId, number>>();

  constructor(
    private readonly tasks: BashTasks,
    readonly limit: number,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(
        `maxBackgroundTasksPerSession must be a positive integer or Infinity, got ${limit}`,
      );
    }
  }

  /**
   * Runs `start` (which starts one background task of the session) when the session runs fewer
   * than `limit` tasks; otherwise throws `BackgroundQuotaError` and starts nothing.
   */
  start(sessionId: string, start: () => Promise<TaskId>): Promise<TaskId> {
    return this.inTurn(sessionId, async () => {
      const running = await this.running(sessionId);
      if (running >= this.limit) throw new BackgroundQuotaError(running, this.limit);
      const taskId = await start();
      this.startedNow(sessionId, taskId);
      return taskId;
    });
  }

  /**
   * Runs `move` (which moves a foreground run of the session to the background) when the session
   * runs fewer than `limit` background tasks. False when it is at the limit (the run stays in the
   * foreground) or the move did not happen.
   */
  move(sessionId: string, taskId: TaskId, move: () => Promise<boolean>): Promise<boolean> {
    return this.inTurn(sessionId, async () => {
      if ((await this.running(sessionId)) >= this.limit) return false;
      const moved = await move();
      if (moved) this.startedNow(sessionId, taskId);
      return moved;
    });
  }

  /** Runs `work` once the session's earlier checks have settled: checks and starts take turns. */
  private inTurn<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(sessionId) ?? Promise.resolve();
    const turn = previous.then(work);
    const settled = turn.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(sessionId, settled);
    void settled.then(() => {
      if (this.turns.get(sessionId) === settled) this.turns.delete(sessionId);
    });
    return turn;
  }

  /** Counts a task the session now runs in the background until visibility lists it so. */
  private startedNow(sessionId: string, taskId: TaskId): void {
    const recent = this.recent.get(sessionId) ?? new Map<TaskId, number>();
    this.recent.set(sessionId, recent.set(taskId, Date.now()));
  }

  /**
   * How many background tasks the session runs, counting at most `limit` from visibility. At the
   * limit every counted task is confirmed with `describe()` (visibility may still list a task that
   * has just ended), so a refusal counts only tasks that run; below it, only the unlisted recent
   * starts are. The describes run in parallel.
   */
  private async running(sessionId: string): Promise<number> {
    const listed = await this.tasks.list({ owner: sessionId, running: true }, this.limit + FOREGROUND_SLACK);
    // Foreground runs are not background tasks (a run moved to the background is, by its memo).
    const counted = new Set(listed.filter((task) => task.background !== false).map((task) => task.taskId));
    const recent = this.recent.get(sessionId) ?? new Map<TaskId, number>();
    for (const [taskId, startedAt] of recent) {
      // Listed as background, or long enough ago for visibility to have caught up: visibility counts it.
      if (counted.has(taskId) || Date.now() - startedAt > QUOTA_RECENT_START_MS) recent.delete(taskId);
      else counted.add(taskId);
    }
    const toConfirm = counted.size >= this.limit ? [...counted] : [...recent.keys()];
    const running = await Promise.all(toConfirm.map((taskId) => this.isRunning(taskId)));
    toConfirm.forEach((taskId, i) => {
      if (running[i]) return;
      counted.delete(taskId);
      recent.delete(taskId as TaskId);
    });
    if (recent.size === 0) this.recent.delete(sessionId);
    return counted.size;
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
