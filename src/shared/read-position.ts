/** The durable read position of `bash_output`: how many bytes of each stream readers have been given. */
export interface ReadPosition {
  stdout: number;
  stderr: number;
}

export const START_OF_OUTPUT: ReadPosition = { stdout: 0, stderr: 0 };

/** A reader's claim on the bytes before `upTo`: it gets what lies between the old position and it. */
export interface ClaimRequest {
  /** Unique per claim (also the update's id), so a reader that stopped waiting can learn whether it applied. */
  claimId: string;
  upTo: ReadPosition;
  /**
   * Epoch ms on the server's clock after which the claim must not apply: a reader that stopped
   * waiting (no worker answered) must not move the position for bytes it never showed.
   */
  expiresAtMs: number;
  /** The task has ended: its output will not grow, and the reader may end once idle. */
  taskEnded: boolean;
}

export interface ClaimResult {
  /** The position before this claim: the claimer owns the bytes from here to its `upTo`. */
  before: ReadPosition;
  /** The workflow's time when it took the claim (the server's clock), for the client's clock skew. */
  serverTimeMs: number;
}

/** What a reader keeps in its memo, readable with no worker: its position and its latest claims. */
export interface ReaderMemo {
  position: ReadPosition;
  recentClaims: { claimId: string; before: ReadPosition }[];
}

/** What a reader workflow run starts from. */
export interface OutputReaderInput {
  taskId: string;
  position: ReadPosition;
  /** The previous run's latest claims, kept for readers that stopped waiting. */
  recentClaims?: ReaderMemo['recentClaims'];
  /** Whether the task is known to have ended (a claim or the task's own signal said so). */
  taskEnded?: boolean;
  /** Claims one run takes before it continues as new, keeping history and update counts bounded. */
  claimsPerRun: number;
  /** Once the task has ended: time without claims after which the reader ends, its memo kept. */
  idleMs: number;
  /** While the task runs: how often the reader checks whether it ended. @default READER_PROBE_INTERVAL_MS */
  probeIntervalMs?: number;
}

/** The reader workflow of a task: its own id, so it can outlive the task's closed workflow. */
export function outputReaderId(taskId: string): string {
  return `${taskId}-output`;
}

/** Claims a reader's memo remembers, for readers that stopped waiting before the answer came. */
export const RECENT_CLAIMS_KEPT = 16;

/** The prefix of the reason a reader refuses an expired claim; the workflow's time follows it. */
export const CLAIM_EXPIRED = 'claim expired; workflow time ';
