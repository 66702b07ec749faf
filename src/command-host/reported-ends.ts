/**
 * The ends this host's command attempts returned that the server has yet to be seen holding. The
 * SDK sends an attempt's result once and gives up after its own short retries: a worker cut off
 * from the server (or a server restarting) for longer loses the end, and the attempt stays started
 * on the server until its heartbeat timeout, minutes later. The worker's check
 * (worker/lost-ends.ts) finds those and sends them again.
 */
import { REPORTED_ENDS_MAX_BYTES } from '../shared/limits.js';
import type { CommandOutcome } from '../shared/task.js';

/** One attempt's returned end, and what sending it again takes. */
export interface ReportedEnd {
  taskId: string;
  runId: string;
  /** The attempt, as the server's pending activity names it. */
  activityId: string;
  attempt: number;
  /** The attempt's task token: the end is sent again by it. */
  taskToken: Uint8Array;
  outcome: CommandOutcome;
  reportedAtMs: number;
  /** About the size of the end's payload: what keeping it costs. */
  bytes: number;
}

/** The ends returned here and not yet seen on the server, oldest first, within REPORTED_ENDS_MAX_BYTES. */
export class ReportedEnds {
  /** By run: a run has one command attempt at a time. Insertion order is age order. */
  private readonly byRun = new Map<string, ReportedEnd>();
  private bytes = 0;

  constructor(private readonly maxBytes = REPORTED_ENDS_MAX_BYTES) {}

  add(end: Omit<ReportedEnd, 'bytes'>): void {
    this.confirm(end.runId);
    const entry = { ...end, bytes: Buffer.byteLength(JSON.stringify(end.outcome)) };
    this.byRun.set(end.runId, entry);
    this.bytes += entry.bytes;
    for (const oldest of this.byRun.values()) {
      if (this.bytes <= this.maxBytes) break;
      this.confirm(oldest.runId);
    }
  }

  /** The server has the end (or no longer wants it): forget it. */
  confirm(runId: string): void {
    const entry = this.byRun.get(runId);
    if (entry === undefined) return;
    this.byRun.delete(runId);
    this.bytes -= entry.bytes;
  }

  /**
   * The ends returned at least `graceMs` before `nowMs`, oldest first; those older than `maxAgeMs`
   * are forgotten (the server has timed their attempts out by then, and a retry re-attaches).
   */
  due(nowMs: number, graceMs: number, maxAgeMs: number): ReportedEnd[] {
    const due: ReportedEnd[] = [];
    for (const entry of [...this.byRun.values()]) {
      const ageMs = nowMs - entry.reportedAtMs;
      if (ageMs > maxAgeMs) this.confirm(entry.runId);
      else if (ageMs >= graceMs) due.push(entry);
    }
    return due;
  }

  get size(): number {
    return this.byRun.size;
  }
}
