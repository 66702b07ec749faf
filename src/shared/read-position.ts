/**
 * The types of a `bash_output` read, and the read's whole path, top to bottom:
 * - tools/bash-output.ts: the tool (arguments, `wait_ms`, `filter`); tools/render-read.ts its text.
 * - client/task-reads.ts (`TaskReads`): behind the ownership fence, a read on the command's host
 *   while a worker is there, else what the server holds; client/output-wait.ts waits on the latter.
 * - client/output-reader-client.ts: claims and host reads through the task's reader workflow;
 *   client/output-slices.ts slices the server's tails (a heartbeat's, or the result's).
 * - workflows/output-reader.ts (`bashOutputReader`): owns the durable read position, so two reads
 *   never show the same bytes and the position outlives every process.
 * - activities/read-output.ts: on the command's host, reads the spill files (command-host/spill)
 *   from the position, waiting for `wait_ms`; a terminal task's screen comes from
 *   command-host/terminal.
 * - shared/stream-text.ts: where a read may end (whole characters; whole lines for a filter).
 */
import type { TaskState } from './status-line.js';
import type { LimitsReached } from './task.js';
import type { TerminalScreen } from './terminal.js';

/** The durable read position of `bash_output`: how many bytes of each stream readers have been given. */
export interface ReadPosition {
  stdout: number;
  stderr: number;
}

export const START_OF_OUTPUT: ReadPosition = { stdout: 0, stderr: 0 };

/**
 * Where a read or claim of the bytes of `hostQueue`'s spill files starts: the held position, or
 * the start when the position counts another host's files (the task restarted after its host was
 * lost, and its output goes on in a new file). One rule for the reader and the clients that fold
 * its history.
 */
export function positionOn(
  held: { position: ReadPosition; host?: string },
  hostQueue: string | undefined,
): ReadPosition {
  return hostQueue !== undefined && held.host !== undefined && held.host !== hostQueue
    ? START_OF_OUTPUT
    : held.position;
}

/** A reader's claim on the bytes before `upTo`: it gets what lies between the old position and it. */
export interface ClaimRequest {
  /**
   * Unique per claim (also the update's id), so a reader that stopped waiting can learn whether it
   * applied. The reader refuses a claim sent under another update id: a copy of one.
   */
  claimId: string;
  /**
   * The task whose output it claims: a claim copied to another task's reader is refused there.
   * Clients of 0.2.0 send none; their claims expire within seconds.
   */
  taskId?: string;
  upTo: ReadPosition;
  /**
   * Epoch ms on the server's clock after which the claim must not apply: a reader that stopped
   * waiting (no worker answered) must not move the position for bytes it never showed.
   */
  expiresAtMs: number;
  /** The task has ended: its output will not grow, and the reader may end once idle. */
  taskEnded: boolean;
  /**
   * The host queue whose spill files `upTo` counts bytes of, when the claimer knows it. A position
   * held for another host's files (a task restarted after its host was lost) counts from 0 again.
   */
  hostQueue?: string;
}

export interface ClaimResult {
  /** The position before this claim: the claimer owns the bytes from here to its `upTo`. */
  before: ReadPosition;
  /** The workflow's time when it took the claim (the server's clock), for the client's clock skew. */
  serverTimeMs: number;
}

/**
 * A reader's state: its position and its latest claims. Its memo holds it as each run starts (and
 * when a read first shows the end); clients with no worker to ask fold it from the history
 * (client/reader-history.ts).
 */
export interface ReaderMemo {
  position: ReadPosition;
  recentClaims: { claimId: string; before: ReadPosition }[];
  /**
   * A read of the ended task applied (`bash_output` showed its final status): the session knows of
   * the end, so `bash_list` no longer marks a notice that did not reach it.
   */
  endShown?: true;
  /**
   * The host queue whose spill files `position` counts bytes of, once a read or claim named one. A
   * read or claim naming another (the task restarted on another host) starts from 0.
   */
  host?: string;
}

/** What a reader workflow run starts from. */
export interface OutputReaderInput {
  taskId: string;
  position: ReadPosition;
  /** The previous run's latest claims, kept for readers that stopped waiting. */
  recentClaims?: ReaderMemo['recentClaims'];
  /** Whether the task is known to have ended (a claim or the task's own signal said so). */
  taskEnded: boolean;
  /** `ReaderMemo.host` of the previous run. */
  host?: string;
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

/** Claims a reader run carries over (its input, its memo at rest), for readers that stopped waiting before the answer came. */
export const RECENT_CLAIMS_KEPT = 16;

/** The prefix of the reason a reader refuses an expired claim; the workflow's time follows it. */
export const CLAIM_EXPIRED = 'claim expired; workflow time ';

/** One stream's share of a read. */
export interface StreamRead {
  /** The new output, decoded. */
  text: string;
  /** Bytes between the previous read and `text` that this read could not hold (over its limit). */
  droppedBytes: number;
  /** The stream's complete copy on the task's host, when one exists. */
  spillPath?: string;
}

/** A read of a running task's spill files on its host (`readOutput`). */
export interface HostReadRequest {
  taskId: string;
  /** Where the read starts: the read position, or a peek's own position. */
  from: ReadPosition;
  /** How long to wait for output past `from` (or the command's end) when there is none yet; 0 answers at once. */
  waitMs: number;
  /** Only whole lines (a filtered read): an unfinished last line stays for a later read. */
  wholeLines: boolean;
  /**
   * How a terminal task's read answers: its screen (the default), also the lines that scrolled off
   * since `from` (`scrollback`), or the log's raw bytes as any task's (`raw`).
   */
  terminal?: TerminalReadMode;
}

/** See `HostReadRequest.terminal`. */
export type TerminalReadMode = 'screen' | 'scrollback' | 'raw';

/** What a read of a terminal task shows in place of its bytes. */
export interface TerminalRead {
  /** The screen after all of the log the read took. */
  screen: TerminalScreen;
  /** For a `scrollback` read: the lines that scrolled off since `from`, and how many of them are no longer held. */
  scrolledOff?: { lines: string[]; missing: number };
}

/** What a host read found: the bytes `[from, upTo)` of each stream, at most the output limit of each. */
export interface HostRead {
  upTo: ReadPosition;
  stdout: StreamRead;
  stderr: StreamRead;
  /** The hostname whose disk holds the spill files. */
  host: string;
  /** The command's end is recorded: its output will not grow. */
  ended: boolean;
  /** A terminal task's screen, read in place of its stdout's bytes (its stderr is empty). */
  terminal?: TerminalRead;
}

/** A `bash_output` read of a running task, made on its host by its reader workflow. */
export interface HostReadClaim {
  /** Unique per read (also the update's id); a read sent under another update id is refused. */
  claimId: string;
  /** The task whose output it reads, as a claim names it (`ClaimRequest.taskId`). */
  taskId?: string;
  /** The task's host queue, where the read activity runs. */
  hostQueue: string;
  waitMs: number;
  wholeLines: boolean;
  /**
   * Epoch ms on the server's clock when the caller stops waiting: a read that would answer later is
   * not made, and one whose answer comes later does not move the position.
   */
  answerByMs: number;
  /** A peek (`durable-bash logs`): read from here and leave the read position where it is. */
  peekFrom?: ReadPosition;
  /** A terminal task's read: see `HostReadRequest.terminal`. @default 'screen' */
  terminal?: TerminalReadMode;
}

/** The reader's answer to a host read. */
export type HostReadResult = { serverTimeMs: number } & (
  | { kind: 'read'; before: ReadPosition; read: HostRead }
  /** No worker on the task's host took the read in time: nothing moved. */
  | { kind: 'host-unavailable'; position: ReadPosition }
  /** The caller's time ran out (or it gave up) before an answer could reach it: nothing moved. */
  | { kind: 'late'; position: ReadPosition }
);

/**
 * The bytes of one stream a read moved the read position over: `[from, upTo)`, `from` being where
 * the position stood before it. The stream's `text` decodes the last bytes of the range (all of them
 * when its `droppedBytes` is 0); a process handle reads the rest raw (`outputRange`).
 */
export interface ReadRange {
  from: number;
  upTo: number;
}

/** The answer to one `bash_output` call. */
export interface OutputRead {
  state: TaskState;
  stdout: StreamRead;
  stderr: StreamRead;
  /** The host whose disk holds the spill files. */
  host: string | undefined;
  /** No worker took the claim in time: the read position did not move, so this output comes again. */
  unclaimed: boolean;
  /** The limits a finished task ran into (said with its final status). */
  limits?: LimitsReached;
  /** A terminal task's screen (and for a scrollback read, what scrolled off), in place of its bytes. */
  terminal?: TerminalRead;
  /** A running terminal task whose host did not answer: its screen could not be rendered. */
  screenUnavailable?: true;
  /**
   * Where the read moved each stream's position, when the client can tell (absent for an unclaimed
   * read, which moved nothing, and for a read whose text does not end its range: see `ReadRange`).
   */
  ranges?: { stdout: ReadRange; stderr: ReadRange };
}
