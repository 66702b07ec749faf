/**
 * A process spawned in a durable-bash sandbox (AI SDK 7's `SandboxProcess`): a background task whose
 * stdout and stderr are pull-based streams fed by the task's durable reads (`BashTasks.read`, the
 * read position `bash_output` keeps), its exit from the task's result, its kill `bash_kill`'s, its
 * stdin `bash_input`'s. The handle serializes (`WORKFLOW_SERIALIZE`) and re-attaches by task id.
 */
import os from 'node:os';
import type { Experimental_SandboxProcess } from 'ai';
import { InvalidArgumentsError, ReadAbortedError } from '../shared/errors.js';
import { MAX_INPUT_BYTES } from '../shared/limits.js';
import { markers, UNAVAILABLE } from '../shared/render.js';
import type { BashTaskResult, TaskId } from '../shared/task.js';
import { isTaskIdShape } from '../shared/task-id.js';
import type { SandboxCommands } from '../tools/sandbox-commands.js';
import { commandsFor, requireSandboxNode } from './sandbox-client.js';
import { WORKFLOW_DESERIALIZE, WORKFLOW_SERIALIZE } from './workflow-serde.js';

/**
 * The most bytes of one stream a handle holds read from the task but not yet taken by its consumer
 * (and carries when serialized): a read brings at most the worker's output limit (30 KiB by default)
 * of each stream, and one read feeds both, so a consumer that reads only stdout leaves stderr's share
 * here. At this bound the stream that wants more waits until the other is read or cancelled, as a
 * pipe does; the task's output waits in its spill files meanwhile, nothing is lost.
 */
const MAX_UNREAD_BYTES = 1024 * 1024;

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
  version: 1;
  taskId: string;
  sessionId: string;
  taskQueue: string;
  /** Spawned with `stdin: true`: the handle has a `stdin` writer. */
  stdin: boolean;
  /** Bytes read from the task that the consumer had not taken, base64, per stream (each at most MAX_UNREAD_BYTES). */
  unread: { stdout: string; stderr: string };
}

/** What a process handle needs to reach its task. */
interface ProcessTarget {
  taskId: TaskId;
  sessionId: string;
  taskQueue: string;
}

/** The exit a signal death reports, as a shell does: 128 plus the signal's number. */
export function signalExitCode(signal: string): number {
  const number = (os.constants.signals as Record<string, number | undefined>)[signal];
  return 128 + (number ?? 0);
}

/** A task's end as the SDK reports it: the exit code, or a signal's as a shell gives it. */
export function exitCodeOf(result: BashTaskResult): number {
  if (result.exitCode !== null) return result.exitCode;
  return signalExitCode(result.signal ?? 'SIGKILL');
}

/**
 * Both streams of a task, fed by its durable reads: a read is made only when a consumer pulls and
 * its own stream has nothing held, and one read at a time; each read's share of the other stream is
 * held for it (bounded by MAX_UNREAD_BYTES).
 */
class TaskStreams {
  private readonly held: Record<StreamName, Uint8Array[]> = { stdout: [], stderr: [] };
  private readonly heldBytes: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  private readonly cancelled: Record<StreamName, boolean> = { stdout: false, stderr: false };
  private ended = false;
  private reading: Promise<void> | undefined;
  private readAbort: AbortController | undefined;
  /** Resolved (and replaced) whenever a stream takes or drops held bytes. */
  private drained = promiseWithResolve();

  constructor(
    private readonly commands: Promise<SandboxCommands>,
    private readonly target: ProcessTarget,
    unread: { stdout: Uint8Array; stderr: Uint8Array },
  ) {
    for (const stream of STREAMS) if (unread[stream].length > 0) this.hold(stream, unread[stream]);
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

  /** Hands over what is held (the serialized form carries it) and stops a waiting read, which then moves nothing. */
  takeHeld(): { stdout: Uint8Array; stderr: Uint8Array } {
    this.readAbort?.abort();
    const taken = { stdout: concat(this.held.stdout), stderr: concat(this.held.stderr) };
    for (const stream of STREAMS) {
      this.held[stream] = [];
      this.heldBytes[stream] = 0;
    }
    this.notifyDrained();
    return taken;
  }

  private async pull(
    name: StreamName,
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<void> {
    for (;;) {
      const chunk = this.held[name].shift();
      if (chunk !== undefined) {
        this.heldBytes[name] -= chunk.length;
        this.notifyDrained();
        controller.enqueue(chunk);
        return;
      }
      if (this.ended) {
        controller.close();
        return;
      }
      const other: StreamName = name === 'stdout' ? 'stderr' : 'stdout';
      if (this.heldBytes[other] >= MAX_UNREAD_BYTES) {
        // The other stream's consumer is behind: read nothing more until it takes some (or cancels).
        await this.drained.promise;
        continue;
      }
      this.reading ??= this.readOnce().finally(() => {
        this.reading = undefined;
      });
      await this.reading;
    }
  }

  private cancel(name: StreamName): void {
    this.cancelled[name] = true;
    this.held[name] = [];
    this.heldBytes[name] = 0;
    this.notifyDrained();
  }

  /** One durable read: its bytes held for their streams, in order; a read no worker took is left for later. */
  private async readOnce(): Promise<void> {
    const commands = await this.commands;
    const abort = new AbortController();
    this.readAbort = abort;
    let read: Awaited<ReturnType<SandboxCommands['tasks']['read']>>;
    try {
      read = await commands.tasks.read(this.target.taskId, this.target.sessionId, {
        waitMs: Math.min(READ_WAIT_MS, commands.maxWaitMs),
        signal: abort.signal,
        terminal: 'raw',
      });
    } catch (err) {
      // Stopped by a serialization: the host had not answered, so the read moved nothing.
      if (err instanceof ReadAbortedError && abort.signal.aborted) return;
      throw err;
    } finally {
      if (this.readAbort === abort) this.readAbort = undefined;
    }
    if (read.unclaimed) {
      // No worker took the read: the position did not move, and these bytes come with a later read.
      await sleep(UNCLAIMED_RETRY_MS);
      return;
    }
    for (const stream of STREAMS) {
      const part = read[stream];
      if (part.droppedBytes > 0) {
        // The consumer fell more than the worker's output limit behind: those bytes are in the spill file only.
        this.hold(stream, encoder.encode(`\n${markers.dropped(part.spillPath ?? UNAVAILABLE)}\n`));
      }
      if (part.text !== '') this.hold(stream, encoder.encode(part.text));
    }
    if (read.state.status !== 'running') this.ended = true;
  }

  private hold(stream: StreamName, bytes: Uint8Array): void {
    if (this.cancelled[stream]) return;
    this.held[stream].push(bytes);
    this.heldBytes[stream] += bytes.length;
  }

  private notifyDrained(): void {
    this.drained.resolve();
    this.drained = promiseWithResolve();
  }
}

/**
 * A process spawned by `DurableBashSandbox.spawn`: a durable-bash background task. `pid` is undefined
 * (the task's process lives on its worker host, and a handle may be re-attached on another machine);
 * `taskId` names it to `bash_output`, `bash_kill` and the CLI.
 */
export class DurableBashProcess implements Experimental_SandboxProcess {
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
      unread?: { stdout: Uint8Array; stderr: Uint8Array };
      abortSignal?: AbortSignal;
    },
  ) {
    this.streams = new TaskStreams(commands, target, options.unread ?? { stdout: empty, stderr: empty });
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
    return { exitCode: exitCodeOf(result) };
  }

  /** Kills the task's whole process tree (`bash_kill`) and waits for its end; a task that ended is left as it is. */
  async kill(): Promise<void> {
    const commands = await this.commands;
    await commands.tasks.kill(this.target.taskId, this.target.sessionId);
  }

  static [WORKFLOW_SERIALIZE](process: DurableBashProcess): SerializedDurableBashProcess {
    const held = process.streams.takeHeld();
    return {
      kind: 'durable-bash-process',
      version: 1,
      ...process.target,
      stdin: process.stdin !== undefined,
      unread: { stdout: base64(held.stdout), stderr: base64(held.stderr) },
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
      { taskId: checked.taskId as TaskId, sessionId: checked.sessionId, taskQueue: checked.taskQueue },
      {
        stdin: checked.stdin,
        unread: { stdout: fromBase64(checked.unread.stdout), stderr: fromBase64(checked.unread.stderr) },
      },
    );
  }
}

/** The checks a serialized process passes before it is made again: one line naming the field. */
function checkSerializedProcess(data: unknown): SerializedDurableBashProcess {
  const record = (
    typeof data === 'object' && data !== null ? data : {}
  ) as Partial<SerializedDurableBashProcess>;
  if (record.kind !== 'durable-bash-process' || record.version !== 1)
    throw new InvalidArgumentsError(
      'invalid serialized process: expected a durable-bash process of version 1',
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
  if (typeof record.stdin !== 'boolean')
    throw new InvalidArgumentsError('invalid serialized process: stdin must be a boolean');
  for (const stream of STREAMS) {
    const value = record.unread?.[stream];
    if (
      typeof value !== 'string' ||
      !/^[A-Za-z0-9+/]*={0,2}$/.test(value) ||
      (value.length * 3) / 4 > MAX_UNREAD_BYTES + 3
    )
      throw new InvalidArgumentsError(
        `invalid serialized process: unread.${stream} must be base64 of at most ${MAX_UNREAD_BYTES} bytes`,
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

const encoder = new TextEncoder();
const empty = new Uint8Array(0);

function concat(chunks: Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : new Uint8Array(Buffer.concat(chunks));
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function promiseWithResolve(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
