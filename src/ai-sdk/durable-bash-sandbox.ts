/**
 * A durable-bash agent session as AI SDK 7's sandbox (`Experimental_SandboxSession`,
 * docs/SANDBOXES.md): commands are tasks started through `SandboxCommands` (the `bash` tool's
 * checks, policy and quota, pinned to the workspace's host), files go through `WorkspaceFiles` on
 * that host. A mapping only: every rule and text lives in src/tools, src/client and src/shared.
 */
import { randomUUID } from 'node:crypto';
import { type SandboxWorkspace, WorkspaceFiles } from '../client/workspace-files.js';
import {
  InvalidArgumentsError,
  WorkspaceFileNotFoundError,
  WorkspaceFileTooLargeError,
  WorkspaceIsADirectoryError,
  WorkspaceNotADirectoryError,
} from '../shared/errors.js';
import { DEFAULT_MAX_TIMEOUT_MS, WORKSPACE_FILE_MAX_BYTES } from '../shared/limits.js';
import { markers } from '../shared/render.js';
import { finishedState } from '../shared/status-line.js';
import { tailText } from '../shared/stream-text.js';
import { type BashTaskResult, type CommandHost, isCommandHost, type StreamTail } from '../shared/task.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { describeValue } from '../tools/arguments.js';
import type { BashToolsOptions } from '../tools/create-bash-tools.js';
import {
  commandDescription,
  SandboxCommands,
  type SandboxScope,
  shellExitCode,
} from '../tools/sandbox-commands.js';
import { DurableBashProcess } from './durable-bash-process.js';
import { commandsFor, requireSandboxNode } from './sandbox-client.js';
import type {
  SandboxPathOptions as PathOptions,
  SandboxReadTextFileOptions as ReadTextOptions,
  SandboxRunOptions as RunOptions,
  SandboxDirectoryEntry,
  SandboxFileStat,
  SandboxSpawnOptions as SpawnOptions,
  SandboxWriteOptions as WriteOptions,
} from './sandbox-types.js';
import { WORKFLOW_DESERIALIZE, WORKFLOW_SERIALIZE } from './workflow-serde.js';

export interface DurableBashSandboxOptions extends BashToolsOptions {
  /** The agent session: the owner of its tasks and, with sessions apart, its identity on the host. @default a new id */
  sessionId?: string;
  /** The workspace directory on the host. @default a new one the host makes for the session */
  root?: string;
}

/** A sandbox session as plain data: what `WORKFLOW_SERIALIZE` gives and `WORKFLOW_DESERIALIZE` takes. */
export interface SerializedDurableBashSandbox {
  kind: 'durable-bash-sandbox';
  version: 1;
  sessionId: string;
  host: CommandHost;
  root: string;
  taskQueue: string;
  /** Made with a permission policy or approver: a deserialized copy starts commands only once one is registered. */
  guarded: boolean;
}

/**
 * Creates a sandbox session: a new agent session (or `sessionId`) with a workspace on a worker host
 * of `taskQueue`. Needs Node.js 22 or later (as AI SDK 7 does).
 */
export async function createDurableBashSandbox(
  options: DurableBashSandboxOptions,
): Promise<DurableBashSandbox> {
  requireSandboxNode();
  const { sessionId = `sandbox-${randomUUID()}`, root, ...bashOptions } = options;
  if (typeof sessionId !== 'string' || sessionId.trim() === '')
    throw new InvalidArgumentsError(
      `invalid sessionId: expected a non-blank string, got ${describeValue(sessionId)}`,
    );
  const taskQueue = bashOptions.taskQueue ?? DEFAULT_TASK_QUEUE;
  const files = new WorkspaceFiles({ client: options.client, taskQueue });
  const workspace = await files.create(sessionId, root === undefined ? {} : { root });
  return new DurableBashSandbox(Promise.resolve(new SandboxCommands(bashOptions)), files, workspace, {
    taskQueue,
    guarded: bashOptions.policy !== undefined || bashOptions.approve !== undefined,
  });
}

/**
 * AI SDK 7's sandbox over a durable-bash session. Relative paths resolve against the workspace's
 * root, absolute ones must lie inside it; anything outside is refused with one line, before
 * anything starts.
 */
export class DurableBashSandbox {
  /** @internal Made by `createDurableBashSandbox` and by `WORKFLOW_DESERIALIZE`. */
  constructor(
    private readonly commands: Promise<SandboxCommands>,
    private readonly files: WorkspaceFiles | Promise<WorkspaceFiles>,
    private readonly workspace: SandboxWorkspace,
    private readonly settings: { taskQueue: string; guarded: boolean; unguardedRefusal?: string },
  ) {}

  get sessionId(): string {
    return this.workspace.sessionId;
  }

  get root(): string {
    return this.workspace.root;
  }

  get host(): CommandHost {
    return this.workspace.host;
  }

  get description(): string {
    return [
      `The workspace is ${this.root} on the worker host ${this.host.hostId}; commands start there, and relative paths resolve against it.`,
      'Every command is a durable task: it keeps running, and its output and exit code are kept, across restarts of this agent, of the worker and of the Temporal server.',
      'Paths outside the workspace (.., absolute paths elsewhere, links that point out) are refused.',
    ].join('\n');
  }

  /** Runs a command as a foreground task (the `bash` tool's longest timeout, as the worker caps it) and answers with its output and exit code. */
  async run(options: RunOptions): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const commands = await this.startingCommands();
    const taskId = await commands.start(
      this.scope,
      { ...taskArguments(options), timeoutMs: DEFAULT_MAX_TIMEOUT_MS },
      options.abortSignal ? { signal: options.abortSignal } : {},
    );
    const outcome = await commands.foreground(this.scope, taskId, {
      ...(options.abortSignal ? { signal: options.abortSignal } : {}),
    });
    const result =
      outcome.kind === 'ended' ? outcome.result : await commands.tasks.result(taskId, options.abortSignal);
    return runResult(result);
  }

  spawn(
    options: SpawnOptions & { stdin: true },
  ): Promise<DurableBashProcess & { stdin: WritableStream<Uint8Array> }>;
  spawn(options: SpawnOptions & { stdin?: false }): Promise<DurableBashProcess>;
  spawn(options: SpawnOptions): Promise<DurableBashProcess>;
  /** Starts a command as a background task (no timeout applies); with `stdin: true`, its stdin stays open for the handle's writer. */
  async spawn(options: SpawnOptions): Promise<DurableBashProcess> {
    if (options.stdin !== undefined && typeof options.stdin !== 'boolean')
      throw new InvalidArgumentsError(
        `invalid stdin: expected a boolean, got ${describeValue(options.stdin)}`,
      );
    const commands = await this.startingCommands();
    const taskId = await commands.start(
      this.scope,
      {
        ...taskArguments(options),
        run_in_background: true,
        ...(options.stdin ? { keep_stdin_open: true } : {}),
      },
      options.abortSignal ? { signal: options.abortSignal } : {},
    );
    return new DurableBashProcess(
      this.commands,
      { taskId, sessionId: this.sessionId, taskQueue: this.settings.taskQueue, host: this.host },
      { stdin: options.stdin === true, ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}) },
    );
  }

  async readBinaryFile(options: PathOptions): Promise<Uint8Array | null> {
    const path = checkedPath(options);
    const files = await this.files;
    try {
      return await files.readFile(this.workspace, path, {});
    } catch (err) {
      if (err instanceof WorkspaceFileNotFoundError) return null;
      throw err;
    }
  }

  /**
   * The file as a stream of pieces (one workspace operation each, WORKSPACE_TRANSFER_MAX_BYTES at
   * most), the next one read only when the consumer pulls; null when nothing is there.
   */
  async readFile(options: PathOptions): Promise<ReadableStream<Uint8Array> | null> {
    const path = checkedPath(options);
    const files = await this.files;
    const pieces = files.readPieces(this.workspace, path);
    // The first piece is read now, so a missing file is null rather than a stream that fails.
    let first: IteratorResult<Uint8Array, void>;
    try {
      first = await pieces.next();
    } catch (err) {
      if (err instanceof WorkspaceFileNotFoundError) return null;
      throw err;
    }
    let pending: IteratorResult<Uint8Array, void> | undefined = first;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = pending ?? (await pieces.next());
        pending = undefined;
        if (next.done) controller.close();
        else if (next.value.length > 0) controller.enqueue(next.value);
      },
      async cancel() {
        await pieces.return(undefined);
      },
    });
  }

  async readTextFile(options: ReadTextOptions): Promise<string | null> {
    const decoder = textDecoder(options.encoding);
    const startLine = lineOption('startLine', options.startLine) ?? 1;
    const endLine = lineOption('endLine', options.endLine);
    const bytes = await this.readBinaryFile(options);
    if (bytes === null) return null;
    const text = decoder.decode(bytes);
    if (options.startLine === undefined && endLine === undefined) return text;
    // Each line keeps its own newline, so a range reads back exactly as the file holds it.
    const lines = text.split(/(?<=\n)/);
    return lines.slice(startLine - 1, endLine ?? lines.length).join('');
  }

  async writeBinaryFile(options: WriteOptions<Uint8Array>): Promise<void> {
    const path = checkedPath(options);
    if (!(options.content instanceof Uint8Array))
      throw new InvalidArgumentsError(
        `invalid content: expected a Uint8Array, got ${describeValue(options.content)}`,
      );
    const files = await this.files;
    await files.writeFile(this.workspace, path, options.content);
  }

  async writeTextFile(options: WriteOptions<string> & { encoding?: string }): Promise<void> {
    if (typeof options.content !== 'string')
      throw new InvalidArgumentsError(
        `invalid content: expected a string, got ${describeValue(options.content)}`,
      );
    if (options.encoding !== undefined && !/^utf-?8$/i.test(options.encoding))
      throw new InvalidArgumentsError(
        `invalid encoding: expected utf-8, got ${describeValue(options.encoding)}`,
      );
    await this.writeBinaryFile({ ...options, content: new TextEncoder().encode(options.content) });
  }

  /** Collects the stream (at most WORKSPACE_FILE_MAX_BYTES; past it, the stream is cancelled and nothing is written), then writes it. */
  async writeFile(options: WriteOptions<ReadableStream<Uint8Array>>): Promise<void> {
    const path = checkedPath(options);
    if (!(options.content instanceof ReadableStream))
      throw new InvalidArgumentsError(
        `invalid content: expected a ReadableStream, got ${describeValue(options.content)}`,
      );
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = options.content.getReader();
    for (;;) {
      options.abortSignal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > WORKSPACE_FILE_MAX_BYTES) {
        await reader.cancel();
        throw new InvalidArgumentsError(
          `invalid content: the stream is over the ${WORKSPACE_FILE_MAX_BYTES} bytes a file write carries; nothing was written`,
        );
      }
      chunks.push(value);
    }
    await this.writeBinaryFile({ path, content: new Uint8Array(Buffer.concat(chunks)) });
  }

  /** Follows a link (inside the workspace: one that points out is refused); null when nothing is there. */
  async stat(options: PathOptions): Promise<SandboxFileStat | null> {
    const path = checkedPath(options);
    const files = await this.files;
    const found = await files.stat(this.workspace, path);
    if (found === undefined || found === null) return null;
    if (found.type === 'dir') return { type: 'directory', size: found.size };
    if (found.type !== 'symlink') return { type: found.type, size: found.size };
    return this.linkTarget(files, path);
  }

  /**
   * What a link leads to, found by the operations that follow links inside the fence: a listing (a
   * directory), else a read of no bytes (a file, whose size its refusal names). A link that points
   * out is refused by them; one that leads nowhere is null.
   */
  private async linkTarget(files: WorkspaceFiles, path: string): Promise<SandboxFileStat | null> {
    try {
      await files.list(this.workspace, path);
      return { type: 'directory', size: 0 };
    } catch (err) {
      if (err instanceof WorkspaceFileNotFoundError) return null;
      if (!(err instanceof WorkspaceNotADirectoryError)) throw err;
    }
    try {
      const bytes = await files.readFile(this.workspace, path, { maxBytes: 0 });
      return { type: 'file', size: bytes.length };
    } catch (err) {
      if (err instanceof WorkspaceFileTooLargeError) return { type: 'file', size: err.size };
      if (err instanceof WorkspaceFileNotFoundError) return null;
      throw err;
    }
  }

  async listDirectory(options: PathOptions): Promise<SandboxDirectoryEntry[] | null> {
    const path = checkedPath(options);
    const files = await this.files;
    try {
      const entries = await files.list(this.workspace, path);
      return entries.map((entry) => ({
        name: entry.name,
        type: entry.type === 'dir' ? 'directory' : entry.type,
      }));
    } catch (err) {
      if (err instanceof WorkspaceFileNotFoundError) return null;
      throw err;
    }
  }

  /** Deletes a file or a link (never its target); false when nothing is there; a directory is refused. */
  async deleteFile(options: PathOptions): Promise<boolean> {
    const path = checkedPath(options);
    const files = await this.files;
    const found = await files.stat(this.workspace, path);
    if (found === undefined || found === null) return false;
    if (found.type === 'dir') throw new WorkspaceIsADirectoryError(path);
    try {
      await files.remove(this.workspace, path, { recursive: false });
      return true;
    } catch (err) {
      if (err instanceof WorkspaceFileNotFoundError) return false;
      throw err;
    }
  }

  private get scope(): SandboxScope {
    return { sessionId: this.sessionId, host: this.host, root: this.root };
  }

  /** The commands, unless this copy lost the policy its session was made with. */
  private async startingCommands(): Promise<SandboxCommands> {
    const commands = await this.commands;
    if (this.settings.unguardedRefusal !== undefined)
      throw new InvalidArgumentsError(this.settings.unguardedRefusal);
    return commands;
  }

  static [WORKFLOW_SERIALIZE](sandbox: DurableBashSandbox): SerializedDurableBashSandbox {
    return {
      kind: 'durable-bash-sandbox',
      version: 1,
      sessionId: sandbox.sessionId,
      host: { hostId: sandbox.host.hostId, hostQueue: sandbox.host.hostQueue },
      root: sandbox.root,
      taskQueue: sandbox.settings.taskQueue,
      guarded: sandbox.settings.guarded,
    };
  }

  static [WORKFLOW_DESERIALIZE](data: unknown): DurableBashSandbox {
    requireSandboxNode();
    const checked = checkSerializedSandbox(data);
    const found = commandsFor(checked.taskQueue);
    const refusal = found.then(({ registration }) =>
      checked.guarded && !registration.registered
        ? `session ${checked.sessionId} was created with a permission policy; register it with registerDurableBashClient(client, { policy }) before starting commands in a deserialized copy`
        : undefined,
    );
    // A connect that fails is said by the first use of the handle, not as an unhandled rejection.
    found.catch(() => {});
    const settings: { taskQueue: string; guarded: boolean; unguardedRefusal?: string } = {
      taskQueue: checked.taskQueue,
      guarded: checked.guarded,
    };
    const commands = Promise.all([found, refusal]).then(([{ commands }, refused]) => {
      if (refused !== undefined) settings.unguardedRefusal = refused;
      return commands;
    });
    commands.catch(() => {});
    const files = found.then(
      ({ registration }) => new WorkspaceFiles({ client: registration.client, taskQueue: checked.taskQueue }),
    );
    files.catch(() => {});
    return new DurableBashSandbox(
      commands,
      files,
      { sessionId: checked.sessionId, host: checked.host, root: checked.root },
      settings,
    );
  }
}

/** The `bash` tool's arguments for a run or spawn: the command (after the `env` it sets), a description, the workdir. */
function taskArguments(options: RunOptions): Record<string, unknown> {
  const record = (typeof options === 'object' && options !== null ? options : {}) as Partial<RunOptions>;
  const { command, workingDirectory, env } = record;
  if (typeof command !== 'string')
    throw new InvalidArgumentsError(
      `invalid command: expected a non-blank string, got ${describeValue(command)}`,
    );
  return {
    command: `${envPrefix(env)}${command}`,
    description: commandDescription(command),
    ...(workingDirectory !== undefined ? { workdir: workingDirectory } : {}),
  };
}

/** `export NAME='value'` lines for `env` (the permission policy sees them, as it sees the command). */
function envPrefix(env: unknown): string {
  if (env === undefined) return '';
  if (typeof env !== 'object' || env === null || Array.isArray(env))
    throw new InvalidArgumentsError(`invalid env: expected an object of strings, got ${describeValue(env)}`);
  let prefix = '';
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new InvalidArgumentsError(`invalid env: ${JSON.stringify(name)} is not a variable name`);
    if (typeof value !== 'string')
      throw new InvalidArgumentsError(`invalid env.${name}: expected a string, got ${describeValue(value)}`);
    prefix += `export ${name}='${value.replaceAll("'", `'\\''`)}'\n`;
  }
  return prefix;
}

/** A foreground run's result as the SDK's `run` answers: each stream's text (cut ones end with the bash tool's marker), and the exit code. */
function runResult(result: BashTaskResult): { exitCode: number; stdout: string; stderr: string } {
  let stderr = streamText(result.stderr);
  if (result.timedOutAfterMs !== undefined)
    stderr += `${stderr === '' ? '' : '\n'}${markers.timedOut(result.timedOutAfterMs)}`;
  return { exitCode: shellExitCode(finishedState(result)), stdout: streamText(result.stdout), stderr };
}

function streamText(stream: StreamTail): string {
  const text = tailText(stream);
  if (stream.spillPath === undefined) return text;
  return `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}${markers.truncated(stream.spillPath)}`;
}

function checkedPath(options: PathOptions): string {
  const path = (typeof options === 'object' && options !== null ? options : ({} as PathOptions)).path;
  if (typeof path !== 'string' || path === '')
    throw new InvalidArgumentsError(`invalid path: expected a non-empty string, got ${describeValue(path)}`);
  return path;
}

function lineOption(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new InvalidArgumentsError(
      `invalid ${name}: expected a positive integer, got ${describeValue(value)}`,
    );
  return value;
}

function textDecoder(encoding: unknown): { decode(bytes: Uint8Array): string } {
  if (encoding === undefined) return new TextDecoder('utf-8');
  try {
    if (typeof encoding !== 'string') throw new RangeError();
    return new TextDecoder(encoding);
  } catch {
    throw new InvalidArgumentsError(
      `invalid encoding: expected an encoding TextDecoder knows, got ${describeValue(encoding)}`,
    );
  }
}

function checkSerializedSandbox(data: unknown): SerializedDurableBashSandbox {
  const record = (
    typeof data === 'object' && data !== null ? data : {}
  ) as Partial<SerializedDurableBashSandbox>;
  if (record.kind !== 'durable-bash-sandbox' || record.version !== 1)
    throw new InvalidArgumentsError(
      'invalid serialized sandbox: expected a durable-bash sandbox of version 1',
    );
  for (const field of ['sessionId', 'root', 'taskQueue'] as const) {
    if (typeof record[field] !== 'string' || record[field] === '')
      throw new InvalidArgumentsError(`invalid serialized sandbox: ${field} must be a non-empty string`);
  }
  if (!isCommandHost(record.host))
    throw new InvalidArgumentsError(
      'invalid serialized sandbox: host must be { hostId, hostQueue }, non-empty strings',
    );
  if (typeof record.guarded !== 'boolean')
    throw new InvalidArgumentsError('invalid serialized sandbox: guarded must be a boolean');
  return record as SerializedDurableBashSandbox;
}
