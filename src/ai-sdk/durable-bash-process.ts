/**
 * A process spawned in a durable-bash sandbox (AI SDK 7's `SandboxProcess`): a background task whose
 * stdout and stderr are pull-based byte streams fed by the task's durable reads (`BashTasks.read`,
 * the read position `bash_output` keeps) and, for every byte a read skipped or could not give
 * exactly, ranged reads of its spill files (`BashTasks.outputRange`); its exit from the task's
 * result, its kill `bash_kill`'s, its stdin `bash_input`'s. The handle serializes
 * (`WORKFLOW_SERIALIZE`) as the bytes each stream has given, and re-attaches by task id.
 */
import { InvalidArgumentsError } from '../shared/errors.js';
import { MAX_INPUT_BYTES, WORKSPACE_TRANSFER_MAX_BYTES } from '../shared/limits.js';
import { finishedState } from '../shared/status-line.js';
import { type CommandHost, isCommandHost, type TaskId } from '../shared/task.js';
import { isTaskIdShape } from '../shared/task-id.js';
import { type SandboxCommands, shellExitCode } from '../tools/sandbox-commands.js';
import { commandsFor, requireSandboxNode } from './sandbox-client.js';
import type { SandboxProcess } from './sandbox-types.js';
import { appendSegments, plannedEnd, type Segment, segmentsOfRead } from './stream-segments.js';
import { WORKFLOW_DESERIALIZE, WORKFLOW_SERIALIZE } from './workflow-serde.js';

/** How long one read waits on the task's host for new output; a pull that got none reads again. */
const READ_WAIT_MS = 30_000;

/** The pause before reading again after no worker took a read (its output comes with the next one). */
const UNCLAIMED_RETRY_MS = 500;

/** The most stdin bytes one write sends: bash_input's cap (MAX_INPUT_BYTES), a quarter of it so characters split no more than needed. */
const STDIN_CHUNK_BYTES = MAX_INPUT_BYTES / 4;

/** The pause before sending the rest of a stdin write the command did not take (it is not reading yet). */
const PARTIAL_STDIN_RETRY_MS = 100;

const STREAMS = ['stdout', 'stderr'] as const;
type StreamName = (typeof STREAMS)[number];

/** A spawned process as plain data: what `WORKFLOW_SERIALIZE` gives and `WORKFLOW_DESERIALIZE` takes. */
export interface SerializedDurableBashProcess {
  kind: 'durable-bash-process';
  version: 2;
  taskId: string;
  sessionId: string;
  taskQueue: string;
  /** The task's host (the sandbox's): where its spill files are read by range. */
  host: CommandHost;
  /** Spawned with `stdin: true`: the handle has a `stdin` writer. */
  stdin: boolean;
  /** How many bytes of each stream the handle's consumers were given: a deserialized handle goes on from there. */
  delivered: { stdout: number; stderr: number };
}

/** What a process handle needs to reach its task. */
interface ProcessTarget {
  taskId: TaskId;
  sessionId: string;
  taskQueue: string;
  host: CommandHost;
}

/** One stream's state: the bytes its consumer was given, and what it is owed next, in order. */
interface StreamState {
  delivered: number;
  segments: Segment[];
  cancelled: boolean;
}

/**
 * Both streams of a task. A pull gives the stream's next segment: held bytes, or one ranged read
 * (at most WORKSPACE_TRANSFER_MAX_BYTES) of the spill file; with none, one durable read (one at a
 * time, for both streams) adds segments to each. What the handle holds is bounded: per stream, at
 * most one read's text (the worker's output limit, 30 KiB by default), the rest as ranges to read
 * when pulled.
 */
class TaskStreams {
  private readonly state: Record<StreamName, StreamState>;
  private ended = false;
  private reading: Promise<void> | undefined;
  /** The next read answers at once: a deserialized handle's first, and one after a read that could not say its range. */
  private catchUp: boolean;

  constructor(
    private readonly commands: Promise<SandboxCommands>,
    private readonly target: ProcessTarget,
    delivered: { stdout: number; stderr: number } | undefined,
  ) {
    const fresh = (from: number): StreamState => ({ delivered: from, segments: [], cancelled: false });
    this.state = { stdout: fresh(delivered?.stdout ?? 0), stderr: fresh(delivered?.stderr ?? 0) };
    this.catchUp = delivered !== undefined;
  }

  stream(name: StreamName): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.pull(name, controller),
        cancel: () => this.cancel(name),
      },
      // Nothing is read ahead of the consumer: `pull` runs only while a read of the stream waits.
      { highWaterMark: 0 },
    );
  }

  /** The bytes of each stream its consumer was given. */
  delivered(): { stdout: number; stderr: number } {
    return { stdout: this.state.stdout.delivered, stderr: this.state.stderr.delivered };
  }

  private async pull(
    name: StreamName,
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<void> {
    const state = this.state[name];
    for (;;) {
      const segment = state.segments[0];
      if (segment?.kind === 'bytes') {
        state.segments.shift();
        state.delivered += segment.bytes.length;
        controller.enqueue(segment.bytes);
        return;
      }
      if (segment?.kind === 'range') {
        const bytes = await this.rangeRead(name, segment.start, segment.end);
        if (state.cancelled) return;
        segment.start += bytes.length;
        if (segment.start >= segment.end) state.segments.shift();
        state.delivered += bytes.length;
        controller.enqueue(bytes);
        return;
      }
      if (this.ended) {
        controller.close();
        return;
      }
      this.reading ??= this.readOnce().finally(() => {
        this.reading = undefined;
      });
      await this.reading;
    }
  }

  /** The first bytes of `[start, end)` of the stream's spill file, at most WORKSPACE_TRANSFER_MAX_BYTES; never none. */
  private async rangeRead(name: StreamName, start: number, end: number): Promise<Uint8Array> {
    const { tasks } = await this.commands;
    const bytes = await tasks.outputRange(this.target.taskId, this.target.sessionId, {
      hostQueue: this.target.host.hostQueue,
      stream: name,
      start,
      end: Math.min(end, start + WORKSPACE_TRANSFER_MAX_BYTES),
    });
    if (bytes.length === 0)
      throw new Error(
        `task ${this.target.taskId}'s ${name} ends before byte ${end} on its host ${this.target.host.hostId}: its spill file was cut short`,
      );
    return bytes;
  }

  private cancel(name: StreamName): void {
    this.state[name].cancelled = true;
    this.state[name].segments = [];
  }

  /** One durable read: what it moved over added to each stream; a read no worker took is left for later. */
  private async readOnce(): Promise<void> {
    const commands = await this.commands;
    const read = await commands.tasks.read(this.target.taskId, this.target.sessionId, {
      waitMs: this.catchUp ? 0 : Math.min(READ_WAIT_MS, commands.maxWaitMs),
      terminal: 'raw',
    });
    if (read.unclaimed) {
      // No worker took the read: the position did not move, and these bytes come with a later read.
      await sleep(UNCLAIMED_RETRY_MS);
      return;
    }
    if (read.ranges === undefined) {
      // The read could not say what it moved over: the next one, made at once, says where the
      // position now stands, and everything before it is read by range.
      this.catchUp = true;
      return;
    }
    this.catchUp = false;
    for (const name of STREAMS) {
      const state = this.state[name];
      if (state.cancelled) continue;
      const added = segmentsOfRead(
        plannedEnd(state.delivered, state.segments),
        read.ranges[name],
        read[name],
        state.segments.length === 0,
      );
      appendSegments(state.segments, added);
    }
    if (read.state.status !== 'running') this.ended = true;
  }
}

/**
 * A process spawned by `DurableBashSandbox.spawn`: a durable-bash background task. `pid` is undefined
 * (the task's process lives on its worker host, and a handle may be re-attached on another machine);
 * `taskId` names it to `bash_output`, `bash_kill` and the CLI.
 */
export class DurableBashProcess implements SandboxProcess {
  readonly pid: number | undefined = undefined;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /** Present when spawned with `stdin: true`: each write goes to the command's stdin (`bash_input`), closing it sends EOF. */
  readonly stdin?: WritableStream<Uint8Array>;
  private readonly streams: TaskStreams;

  /** @internal Made by `DurableBashSandbox.spawn` and by `WORKFLOW_DESERIALIZE`. */
  constructor(
    private readonly commands: Promise<SandboxCommands>,
    private readonly target: ProcessTarget,
    options: {
      stdin: boolean;
      /** A deserialized handle's: the bytes of each stream already given, where its streams go on. */
      delivered?: { stdout: number; stderr: number };
      abortSignal?: AbortSignal;
    },
  ) {
    this.streams = new TaskStreams(commands, target, options.delivered);
    this.stdout = this.streams.stream('stdout');
    this.stderr = this.streams.stream('stderr');
    if (options.stdin) this.stdin = stdinWriter(commands, target);
    this.abortSignal = options.abortSignal;
    options.abortSignal?.addEventListener('abort', () => void this.kill().catch(() => {}), { once: true });
  }

  private readonly abortSignal: AbortSignal | undefined;

  /** The task's id (its workflow id). */
  get taskId(): string {
    return this.target.taskId;
  }

  /** The agent session that owns the task. */
  get sessionId(): string {
    return this.target.sessionId;
  }

  /**
   * Resolves when the task ends: its exit code, or for a signal death (`kill()`, a timeout, the
   * kernel) 128 plus the signal's number, as a shell reports it (143 for SIGTERM). A task that could
   * not run or whose host was lost rejects with its one-line reason; so does one whose spawn's
   * `abortSignal` fired (with the abort's reason).
   */
  async wait(): Promise<{ exitCode: number }> {
    const commands = await this.commands;
    // Behind the ownership fence: a foreign or unknown task is refused with one line.
    await commands.tasks.describeOwned(this.target.taskId, this.target.sessionId);
    const result = await commands.tasks.result(this.target.taskId, undefined, this.abortSignal);
    this.abortSignal?.throwIfAborted();
    return { exitCode: shellExitCode(finishedState(result)) };
  }

  /** Kills the task's whole process tree (`bash_kill`) and waits for its end; a task that ended is left as it is. */
  async kill(): Promise<void> {
    const commands = await this.commands;
    await commands.tasks.kill(this.target.taskId, this.target.sessionId);
  }

  /**
   * The handle as plain data: each stream's delivered offset, no bytes. The handle stays usable; a
   * copy made from the data gives each stream from that offset on, whatever either reads meanwhile.
   */
  static [WORKFLOW_SERIALIZE](process: DurableBashProcess): SerializedDurableBashProcess {
    return {
      kind: 'durable-bash-process',
      version: 2,
      ...process.target,
      host: { ...process.target.host },
      stdin: process.stdin !== undefined,
      delivered: process.streams.delivered(),
    };
  }

  static [WORKFLOW_DESERIALIZE](data: unknown): DurableBashProcess {
    requireSandboxNode();
    const checked = checkSerializedProcess(data);
    const commands = commandsFor(checked.taskQueue).then((found) => found.commands);
    // A connect that fails is said by the first use of the handle, not as an unhandled rejection.
    commands.catch(() => {});
    return new DurableBashProcess(
      commands,
      {
        taskId: checked.taskId as TaskId,
        sessionId: checked.sessionId,
        taskQueue: checked.taskQueue,
        host: { hostId: checked.host.hostId, hostQueue: checked.host.hostQueue },
      },
      { stdin: checked.stdin, delivered: { ...checked.delivered } },
    );
  }
}

/** The checks a serialized process passes before it is made again: one line naming the field. */
function checkSerializedProcess(data: unknown): SerializedDurableBashProcess {
  const record = (
    typeof data === 'object' && data !== null ? data : {}
  ) as Partial<SerializedDurableBashProcess>;
  if (record.kind !== 'durable-bash-process' || record.version !== 2)
    throw new InvalidArgumentsError(
      'invalid serialized process: expected a durable-bash process of version 2',
    );
  for (const field of ['taskId', 'sessionId', 'taskQueue'] as const) {
    const value = record[field];
    if (typeof value !== 'string' || value === '')
      throw new InvalidArgumentsError(`invalid serialized process: ${field} must be a non-empty string`);
  }
  if (!isTaskIdShape(record.taskId as string))
    throw new InvalidArgumentsError(
      `invalid serialized process: ${JSON.stringify(record.taskId)} is not a task id`,
    );
  if (!isCommandHost(record.host))
    throw new InvalidArgumentsError(
      'invalid serialized process: host must be { hostId, hostQueue }, non-empty strings',
    );
  if (typeof record.stdin !== 'boolean')
    throw new InvalidArgumentsError('invalid serialized process: stdin must be a boolean');
  for (const stream of STREAMS) {
    const value = record.delivered?.[stream];
    if (!Number.isSafeInteger(value) || (value as number) < 0)
      throw new InvalidArgumentsError(
        `invalid serialized process: delivered.${stream} must be a non-negative integer`,
      );
  }
  return record as SerializedDurableBashProcess;
}

/**
 * The command's stdin as a writer: each chunk goes through `bash_input` (as UTF-8 text, so invalid
 * UTF-8 is replaced), a chunk the command does not take at once is sent again until it does (the
 * writer's back-pressure), and closing sends EOF.
 */
function stdinWriter(commands: Promise<SandboxCommands>, target: ProcessTarget): WritableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const send = async (text: string, close: boolean) => {
    const { tasks } = await commands;
    let rest = text;
    for (;;) {
      const result = await tasks.writeStdin(target.taskId, target.sessionId, { text: rest, close });
      if (result.kind !== 'partial') return;
      rest = Buffer.from(rest).subarray(result.bytes).toString('utf8');
      await sleep(PARTIAL_STDIN_RETRY_MS);
    }
  };
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      for (let start = 0; start < chunk.length; start += STDIN_CHUNK_BYTES) {
        const text = decoder.decode(chunk.subarray(start, start + STDIN_CHUNK_BYTES), { stream: true });
        if (text !== '') await send(text, false);
      }
    },
    async close() {
      await send(decoder.decode(), true);
    },
    async abort() {
      await send('', true);
    },
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
