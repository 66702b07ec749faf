/**
 * Reading a task's output for `bash_output` and `logs --follow`: on the command's host through the
 * task's reader workflow while it runs there (fresh, and waiting there for `waitMs`), else what the
 * server holds. Every read here is of a task already described behind the ownership fence.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { ReadAbortedError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import type {
  HostRead,
  ReadPosition,
  StreamRead,
  TerminalRead,
  TerminalReadMode,
} from '../shared/read-position.js';
import {
  HostReadAborted,
  type OutputRead,
  type ReaderOptions,
  rangesOf,
  readNewOutput,
  readOnHost,
  readPosition,
} from './output-reader-client.js';
import { unclaimedRead } from './output-slices.js';
import { type WaitOptions, waitForNewOutput } from './output-wait.js';
import {
  commandHostQueue,
  isTerminalTask,
  restartsOf,
  snapshotFromDescription,
  type TaskSnapshot,
} from './task-snapshot.js';
import { asClientError } from './temporal-unreachable.js';

/** How long a read whose command just ended waits for the task to close, to answer with its final status. */
const CLOSING_READ_WAIT_MS = 2_000;

/** How often that read looks. */
const CLOSING_READ_INTERVAL_MS = 25;

/** How often a waiting read looks whether its task has reached a host yet. */
const WAIT_FOR_HOST_INTERVAL_MS = 50;

/** How a `bash_output` read is made. */
export interface ReadOptions {
  /** A running task's unfinished last line stays for a later read (a filtered read). */
  wholeLines?: boolean;
  /** With nothing new, wait this long for new output (or the task's end). */
  waitMs?: number;
  /** Aborts a waiting read (`ReadAbortedError`); a read the host had not answered moves nothing. */
  signal?: AbortSignal;
  /** Only new text this says yes to ends the wait (a filtered read: a line that matches). */
  wanted?: (text: string) => boolean;
  /** How a terminal task's read answers (other tasks' reads are the same either way). @default 'screen' */
  terminal?: TerminalReadMode;
}

/** A client's reads of its tasks' output, through each task's reader workflow. */
export class TaskReads {
  constructor(
    private readonly client: Client,
    /** How reads run the task's reader workflow. */
    private readonly reader: ReaderOptions,
  ) {}

  /**
   * The output since the previous read of this task (described behind the fence), and where the
   * task stands: see `BashTasks.read`.
   */
  async read(description: WorkflowExecutionDescription, options: ReadOptions): Promise<OutputRead> {
    const taskId = description.workflowId;
    const deadline = Date.now() + Math.max(0, options.waitMs ?? 0);
    const terminal = isTerminalTask(description) && options.terminal !== 'raw';
    try {
      // A task that has not reached a host yet gets there within moments (a worker picks it up). A
      // terminal task's screen is only on its host: wait for one there longer (its worker restarting).
      const hostDeadline = terminal ? Math.max(deadline, Date.now() + TERMINAL_HOST_WAIT_MS) : deadline;
      const { current, hostQueue } = await this.onHost(description, hostDeadline, options.signal);
      if (hostQueue !== undefined) {
        const waitMs = Math.max(0, deadline - Date.now());
        const rest = options.waitMs === undefined ? { ...options } : { ...options, waitMs };
        return await this.readFromHost(current, hostQueue, rest);
      }
      if (terminal && current.status.name === 'RUNNING') return screenUnavailable(current);
      // A task not on a host yet (or recorded before reads went there), or one that has closed:
      // the server holds all there is.
      const left = deadline - Date.now();
      if (current.status.name === 'RUNNING' && left > 0) {
        await this.waitForOutput(current, left, options.signal, options);
      }
      const snapshot = await this.snapshotOf(await this.describeAgain(current));
      return await readNewOutput(
        this.client,
        snapshot,
        this.reader,
        options.wholeLines === true,
        options.terminal,
      );
    } catch (err) {
      if (err instanceof HostReadAborted) throw new ReadAbortedError(taskId);
      if (err instanceof ReadAbortedError) throw err;
      throw asClientError(this.client, err);
    }
  }

  /**
   * Reads on the task's host until there is something to show (for a filtered wait, a wanted line),
   * the command ended, or the wait is over. Bytes a round read but did not want are shown with the
   * rest (a filter counts them as left out).
   */
  private async readFromHost(
    description: WorkflowExecutionDescription,
    hostQueue: string,
    options: ReadOptions,
  ): Promise<OutputRead> {
    const taskId = description.workflowId;
    const readerOptions = this.reader;
    const deadline = Date.now() + Math.max(0, options.waitMs ?? 0);
    let shown: HostRead | undefined;
    let shownRanges: OutputRead['ranges'];
    for (;;) {
      const result = await readOnHost(
        this.client,
        taskId,
        hostQueue,
        {
          waitMs: Math.max(0, deadline - Date.now()),
          wholeLines: options.wholeLines === true,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.terminal ? { terminal: options.terminal } : {}),
        },
        readerOptions,
      );
      // A reader that answered too late to read moved nothing: as with no worker on the host, the
      // caller gets what the server holds, never a "(no new output)" that may not be true.
      if (result === undefined || result.kind === 'host-unavailable' || result.kind === 'late') {
        if (shown !== undefined) return runningRead(description, shown, shownRanges);
        // No worker on the host answered: what the server last knew, the position unmoved.
        if (isTerminalTask(description) && options.terminal !== 'raw') return screenUnavailable(description);
        const snapshot = await this.snapshotOf(await this.describeAgain(description));
        const position = result?.position ?? (await readPosition(this.client, taskId, snapshot.hostQueue));
        return unclaimedRead(snapshot, position, options.wholeLines === true);
      }
      const { read } = result;
      const grew = read.upTo.stdout > result.before.stdout || read.upTo.stderr > result.before.stderr;
      const ranges = rangesOf(result.before, read.upTo);
      shownRanges = shown === undefined ? ranges : joinRanges(shown, shownRanges, read, ranges);
      shown = shown === undefined ? read : joinReads(shown, read);
      if (read.ended) return this.closingRead(description, shown, shownRanges, options.terminal);
      const wantedNow =
        grew &&
        (options.wanted === undefined ||
          read.stdout.droppedBytes + read.stderr.droppedBytes > 0 ||
          options.wanted(read.terminal ? terminalText(read.terminal) : read.stdout.text) ||
          options.wanted(read.stderr.text));
      if (wantedNow || Date.now() >= deadline || options.waitMs === undefined)
        return runningRead(description, shown, shownRanges);
    }
  }

  /**
   * A running task's output from `from` on, read on its host (waiting there up to `waitMs` for more),
   * without moving `bash_output`'s read position: an operator's view (`durable-bash logs --follow`).
   * Undefined when the task is not running on a host, or no worker there answered in time: the
   * server's snapshot is then all there is.
   */
  async peek(
    description: WorkflowExecutionDescription,
    from: ReadPosition,
    waitMs: number,
    terminal: TerminalReadMode = 'raw',
  ): Promise<HostRead | undefined> {
    const taskId = description.workflowId;
    const hostQueue = await commandHostQueue(this.client, description);
    if (hostQueue === undefined) return undefined;
    try {
      const result = await readOnHost(
        this.client,
        taskId,
        hostQueue,
        { waitMs, wholeLines: false, peekFrom: from, terminal },
        this.reader,
      );
      return result?.kind === 'read' ? result.read : undefined;
    } catch (err) {
      throw asClientError(this.client, err);
    }
  }

  /**
   * A read whose command ended on the host: its output is whole, and the task closes within moments.
   * Answers with the final status once it has (reading what the result holds past the position, which
   * is nothing more), else with the output and the running status.
   */
  private async closingRead(
    description: WorkflowExecutionDescription,
    shown: HostRead,
    shownRanges: OutputRead['ranges'],
    terminal: TerminalReadMode | undefined,
  ): Promise<OutputRead> {
    const until = Date.now() + CLOSING_READ_WAIT_MS;
    for (;;) {
      const now = await this.describeAgain(description);
      if (now.status.name !== 'RUNNING') {
        const snapshot = await this.snapshotOf(now);
        const rest = await readNewOutput(this.client, snapshot, this.reader, false, terminal);
        // The host read the whole log: the screen it rendered is the last one.
        const screen = shown.terminal ?? rest.terminal;
        const { ranges: restRanges, ...restRead } = rest;
        // A rest that moved nothing adds no range; one whose text the server alone holds, none known.
        const ranges = rest.unclaimed ? undefined : joinRanges(shown, shownRanges, rest, restRanges);
        return {
          ...restRead,
          ...(ranges ? { ranges } : {}),
          stdout: joinStreams(shown.stdout, rest.stdout),
          stderr: joinStreams(shown.stderr, rest.stderr),
          host: rest.host ?? shown.host,
          ...(screen ? { terminal: screen } : {}),
        };
      }
      if (Date.now() >= until) return runningRead(description, shown, shownRanges);
      await sleep(CLOSING_READ_INTERVAL_MS);
    }
  }

  /**
   * The task once its run names its host, it closed, or `deadline` passed (then as it stands): a
   * waiting read of a task still on its way to a host reads there as soon as it is on one.
   */
  /**
   * The task's host queue once an attempt names it, describing again until `deadline` while the
   * task runs without one (a worker picks its host within moments); with the latest description.
   */
  async onHost(
    description: WorkflowExecutionDescription,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<{ current: WorkflowExecutionDescription; hostQueue: string | undefined }> {
    let current = description;
    for (;;) {
      const hostQueue = await commandHostQueue(this.client, current);
      if (hostQueue !== undefined || current.status.name !== 'RUNNING' || Date.now() >= deadline)
        return { current, hostQueue };
      if (signal?.aborted) throw new ReadAbortedError(description.workflowId);
      await sleep(Math.min(WAIT_FOR_HOST_INTERVAL_MS, deadline - Date.now()));
      current = await this.describeAgain(current);
    }
  }

  describeAgain(description: WorkflowExecutionDescription): Promise<WorkflowExecutionDescription> {
    return this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      this.client.workflow.getHandle(description.workflowId).describe(),
    );
  }

  snapshotOf(description: WorkflowExecutionDescription): Promise<TaskSnapshot> {
    return this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      snapshotFromDescription(this.client, description),
    );
  }

  /**
   * Waits up to `timeoutMs` while the task runs with nothing new to read (see `waitForNewOutput`);
   * resolves when there is output to read, the task ended, or the time is up. Throws
   * `ReadAbortedError` when `signal` aborts the wait. Works with no worker alive.
   */
  async waitForOutput(
    described: WorkflowExecutionDescription,
    timeoutMs: number,
    signal?: AbortSignal,
    options: Pick<WaitOptions, 'wholeLines' | 'wanted'> = {},
  ): Promise<void> {
    const taskId = described.workflowId;
    // The position counts the bytes of the host the latest snapshot is of (see `positionOn`).
    let hostQueue: string | undefined;
    const outcome = await waitForNewOutput(
      () =>
        this.describeAgain(described)
          .then((description) => this.snapshotOf(description))
          .then((snapshot) => {
            hostQueue = snapshot.hostQueue;
            return snapshot;
          }),
      () =>
        readPosition(this.client, taskId, hostQueue).catch((err: unknown) =>
          Promise.reject(asClientError(this.client, err)),
        ),
      { ...options, timeoutMs, ...(signal !== undefined ? { signal } : {}) },
    );
    if (outcome === 'aborted') throw new ReadAbortedError(taskId);
  }
}

/** What a terminal read shows as lines, for a filtered wait: the scrolled-off lines, or the screen's rows. */
function terminalText(terminal: TerminalRead): string {
  const lines = terminal.scrolledOff?.lines ?? terminal.screen.lines;
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** How long a read of a terminal task waits for its command to be on a host (a worker restarting there). */
const TERMINAL_HOST_WAIT_MS = 10_000;

/**
 * A running terminal task's read when no worker on its host answered: its screen is rendered
 * there alone (the server holds only the log's last bytes), so the read says so and moves nothing.
 */
function screenUnavailable(description: WorkflowExecutionDescription): OutputRead {
  const nothing = { text: '', droppedBytes: 0 };
  return {
    state: { status: 'running', ...restartsOf(description) },
    stdout: nothing,
    stderr: nothing,
    host: undefined,
    unclaimed: true,
    screenUnavailable: true,
  };
}

/** A host read as a `bash_output` answer while the task runs. */
function runningRead(
  description: WorkflowExecutionDescription,
  read: HostRead,
  ranges: OutputRead['ranges'],
): OutputRead {
  return {
    state: { status: 'running', ...restartsOf(description) },
    stdout: read.stdout,
    stderr: read.stderr,
    host: read.host,
    unclaimed: false,
    ...(read.terminal ? { terminal: read.terminal } : {}),
    ...(ranges ? { ranges } : {}),
  };
}

/**
 * The ranges of two reads of one call, joined as their texts are (`joinStreams`): undefined when the
 * joined text would not end the joined range (the second read does not start where the first
 * stopped, or leaves out bytes after text the first showed).
 */
function joinRanges(
  first: Pick<OutputRead, 'stdout' | 'stderr'>,
  firstRanges: OutputRead['ranges'],
  second: Pick<OutputRead, 'stdout' | 'stderr'>,
  secondRanges: OutputRead['ranges'],
): OutputRead['ranges'] {
  if (firstRanges === undefined || secondRanges === undefined) return undefined;
  const joined = { ...firstRanges };
  for (const stream of ['stdout', 'stderr'] as const) {
    const [a, b] = [firstRanges[stream], secondRanges[stream]];
    // The second moved nothing of this stream: the first's range stands.
    if (b.upTo === b.from && second[stream].text === '') continue;
    if (a.upTo !== b.from || (first[stream].text !== '' && second[stream].droppedBytes > 0)) return undefined;
    joined[stream] = { from: a.from, upTo: b.upTo };
  }
  return joined;
}

/** Two reads of one call, one after the other, as one. */
function joinReads(first: HostRead, second: HostRead): HostRead {
  const joined: HostRead = {
    ...second,
    stdout: joinStreams(first.stdout, second.stdout),
    stderr: joinStreams(first.stderr, second.stderr),
  };
  // The later screen stands; the lines that scrolled off add up.
  const [before, after] = [first.terminal?.scrolledOff, second.terminal?.scrolledOff];
  if (second.terminal && before && after)
    joined.terminal = {
      ...second.terminal,
      scrolledOff: { lines: [...before.lines, ...after.lines], missing: before.missing + after.missing },
    };
  return joined;
}

function joinStreams(first: StreamRead, second: StreamRead): StreamRead {
  const spillPath = second.spillPath ?? first.spillPath;
  return {
    text: first.text + second.text,
    droppedBytes: first.droppedBytes + second.droppedBytes,
    ...(spillPath !== undefined ? { spillPath } : {}),
  };
}
