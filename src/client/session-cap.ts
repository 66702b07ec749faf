import { QUOTA_RECENT_START_MS } from '../shared/limits.js';

/** How a cap finds a session's workflows of its kind (running background tasks, pending approval requests). */
export interface CappedKind {
  /**
   * The ids visibility lists for the session: at least `atLeast` of them when it has that many
   * (it may still list one that has just ended, and not yet one that has just started).
   */
  listed(sessionId: string, atLeast: number): Promise<string[]>;
  /** Whether one still counts, asked of the server itself. */
  counts(workflowId: string): Promise<boolean>;
}

/**
 * A cap on a session's workflows of one kind, counted in visibility before each start. Checks and
 * starts of one session take turns within this process, and a workflow started here counts until
 * visibility lists it (for QUOTA_RECENT_START_MS at most, confirmed with the server: visibility may
 * lag a start by a moment on a real cluster), so a burst from one process never passes the cap.
 * Two processes starting for the same session at the same moment can pass it by the few each
 * started within the other's visibility lag.
 */
export class SessionCap {
  /** The last check-and-start of each session, which the next one waits for. */
  private readonly turns = new Map<string, Promise<void>>();
  /** Per session, the workflows started here lately and when. */
  private readonly recent = new Map<string, Map<string, number>>();

  constructor(private readonly kind: CappedKind) {}

  /**
   * Runs `start` (which starts one workflow of the kind for the session; `idOf` names it) when the
   * session has fewer than `limit`: what it answered, or, at the limit, how many the session has
   * (nothing started).
   */
  startWithin<T>(
    sessionId: string,
    limit: number,
    start: () => Promise<T>,
    idOf: (started: T) => string,
  ): Promise<{ started: T } | { atLimit: number }> {
    return this.inTurn(sessionId, async () => {
      const count = await this.count(sessionId, limit);
      if (count >= limit) return { atLimit: count };
      const started = await start();
      this.startedNow(sessionId, idOf(started));
      return { started };
    });
  }

  /** Runs `work` once the session's earlier checks have settled: checks and starts take turns. */
  inTurn<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
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

  /** Counts a workflow the session now has until visibility lists it. */
  startedNow(sessionId: string, workflowId: string): void {
    const recent = this.recent.get(sessionId) ?? new Map<string, number>();
    this.recent.set(sessionId, recent.set(workflowId, Date.now()));
  }

  /**
   * How many the session has, counting at most `limit` from visibility. At the limit every counted
   * one is confirmed with the server (visibility may still list one that has just ended), so a
   * refusal counts only those that count; below it, only the unlisted recent starts are. The
   * confirmations run in parallel.
   */
  async count(sessionId: string, limit: number): Promise<number> {
    const counted = new Set(await this.kind.listed(sessionId, limit));
    const recent = this.recent.get(sessionId) ?? new Map<string, number>();
    for (const [workflowId, startedAt] of recent) {
      // Listed, or long enough ago for visibility to have caught up: visibility counts it.
      if (counted.has(workflowId) || Date.now() - startedAt > QUOTA_RECENT_START_MS)
        recent.delete(workflowId);
      else counted.add(workflowId);
    }
    const toConfirm = counted.size >= limit ? [...counted] : [...recent.keys()];
    const counts = await Promise.all(toConfirm.map((workflowId) => this.kind.counts(workflowId)));
    toConfirm.forEach((workflowId, i) => {
      if (counts[i]) return;
      counted.delete(workflowId);
      recent.delete(workflowId);
    });
    if (recent.size === 0) this.recent.delete(sessionId);
    return counted.size;
  }
}
