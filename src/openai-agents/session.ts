/**
 * A durable-bash agent session as the OpenAI Agents SDK's `SandboxSession`: every command a
 * durable-bash task started through `SandboxCommands` (the `bash` tool's checks, policy and quota,
 * pinned to the workspace's host), every file call a `WorkspaceFiles` operation on that host. The
 * SDK's numeric process ids live in `state`, so they survive serialization with the run.
 */
import path from 'node:path';
import { applyDiff, type Editor } from '@openai/agents-core';
import {
  type ExecCommandArgs,
  type ListDirectoryArgs,
  Manifest,
  type MaterializeEntryArgs,
  permissionsForSandboxEntry,
  type ReadFileArgs,
  type SandboxArchiveLimits,
  SandboxConfigurationError,
  type SandboxDirectoryEntry,
  type SandboxExecResult,
  SandboxLifecycleError,
  SandboxRuntimeError,
  type SandboxSession,
  type SandboxSessionState,
  SandboxUnsupportedFeatureError,
  SandboxWorkspaceReadNotFoundError,
  SandboxWorkspaceWriteTypeError,
  type ViewImageArgs,
  validateSandboxArchiveLimits,
  type WorkspaceArchiveData,
  type WorkspaceArchiveOptions,
  type WriteStdinArgs,
} from '@openai/agents-core/sandbox';
import {
  formatExecResponse,
  imageOutputFromBytes,
  MAX_VIEW_IMAGE_BYTES,
} from '@openai/agents-core/sandbox/internal';
import {
  DEFAULT_ARCHIVE_LIMITS,
  type SandboxWorkspace,
  type WorkspaceFiles,
} from '../client/workspace-files.js';
import {
  WorkspaceFileNotFoundError,
  WorkspaceFileTooLargeError,
  WorkspaceIsADirectoryError,
} from '../shared/errors.js';
import { MAX_OUTPUT_TOKENS } from '../shared/output-budget.js';
import type { OutputRead } from '../shared/read-position.js';
import { finishedState } from '../shared/status-line.js';
import type { CommandHost, TaskId } from '../shared/task.js';
import { inputText } from '../tools/bash-input.js';
import {
  commandDescription,
  type SandboxCommands,
  type SandboxScope,
  shellExitCode,
} from '../tools/sandbox-commands.js';
import { sandboxCall } from './errors.js';
import { cutToTokens, type ExecOutput, readsOutput, resultOutput } from './exec-output.js';
import { type CopyBudget, planLocalEntry, readLocalFile } from './local-sources.js';

/** How long an exec waits without `yieldTimeMs`: the SDK's own default (its shell capability and UnixLocal session). */
const DEFAULT_EXEC_YIELD_TIME_MS = 10_000;

/** How long a `writeStdin` waits without `yieldTimeMs`: the SDK's own default, a poll's. */
const DEFAULT_WRITE_STDIN_YIELD_TIME_MS = 250;

/** Ctrl-C as `write_stdin` sends it: typed into a terminal; for a task without one, a kill. */
const CTRL_C = '\u0003';

/** A command of the session the SDK knows by a number: its task, and whether it runs on a terminal. */
export interface SandboxProcess {
  taskId: TaskId;
  tty: boolean;
}

/** The session's state: what `serializeSessionState` writes and `resume` needs. */
export interface DurableBashSessionState extends SandboxSessionState {
  /** The durable-bash agent session: owner of its tasks, its identity on the host when sessions are apart. */
  sessionId: string;
  /** The worker host where the workspace is and every command runs. */
  host: CommandHost;
  /**
   * The workspace directory on that host. The manifest's root (`/workspace` by default) names it to
   * the model: paths under that root mean the same place here, in file calls and in commands.
   */
  workspaceRoot: string;
  /** The SDK's process ids (`sessionId` of an exec still running) to their tasks, by the id as a string. */
  processes: Record<string, SandboxProcess>;
  /** The next process id to give out. */
  nextProcessId: number;
}

/** What a session needs besides its state. */
export interface SessionServices {
  commands: SandboxCommands;
  files: WorkspaceFiles;
  archiveLimits?: SandboxArchiveLimits | null;
}

export class DurableBashSandboxSession implements SandboxSession<DurableBashSessionState> {
  state: DurableBashSessionState;
  private readonly commands: SandboxCommands;
  private readonly files: WorkspaceFiles;
  private archiveLimits: SandboxArchiveLimits | null | undefined;
  private closing: Promise<void> | undefined;

  constructor(state: DurableBashSessionState, services: SessionServices) {
    this.state = state;
    this.commands = services.commands;
    this.files = services.files;
    this.archiveLimits = services.archiveLimits;
  }

  private get scope(): SandboxScope {
    return { sessionId: this.state.sessionId, host: this.state.host, root: this.state.workspaceRoot };
  }

  private get workspace(): SandboxWorkspace {
    return this.scope;
  }

  supportsPty(): boolean {
    return true;
  }

  setArchiveLimits(limits?: SandboxArchiveLimits | null): void {
    validateSandboxArchiveLimits(limits);
    this.archiveLimits = limits;
  }

  async execCommand(args: ExecCommandArgs): Promise<string> {
    return formatExecResponse(await this.exec(args));
  }

  /**
   * Runs `cmd` as a task and answers when it ends or `yieldTimeMs` passes. Without a terminal, it
   * is a foreground run of the `bash` tool that moves to the background after the yield (the tool's
   * own auto-background), its stdin an open pipe as UnixLocal's is; with `tty`, a background
   * terminal task read for the yield. Still running: the answer's `sessionId` names it for
   * `writeStdin`.
   */
  exec(args: ExecCommandArgs): Promise<SandboxExecResult> {
    return sandboxCall(async () => {
      const started = Date.now();
      this.assertOpen();
      const yieldTimeMs = yieldOf(args.yieldTimeMs, DEFAULT_EXEC_YIELD_TIME_MS);
      const maxOutputTokens = maxTokensOf(args.maxOutputTokens);
      const command = this.onHost(commandLine(args));
      const workdir = args.workdir === undefined ? undefined : this.workspacePath(args.workdir);
      if (workdir !== undefined) this.files.resolve(this.workspace, workdir);
      const tty = args.tty === true;
      const taskId = await this.commands.start(
        this.scope,
        {
          command,
          description: commandDescription(args.cmd),
          ...(workdir !== undefined ? { workdir } : {}),
          ...(tty ? { tty: true, run_in_background: true } : {}),
          // The host keeps the files of an output longer than the budget, for the cut's marker.
          ...(!tty && maxOutputTokens !== undefined
            ? { max_output_tokens: Math.min(maxOutputTokens, MAX_OUTPUT_TOKENS) }
            : {}),
        },
        { keepStdinOpen: !tty },
      );
      if (tty) {
        const processId = this.track({ taskId, tty });
        return this.answer(
          processId,
          await this.readFor(taskId, Date.now() + yieldTimeMs),
          started,
          maxOutputTokens,
        );
      }
      const outcome = await this.commands.foreground(this.scope, taskId, {
        autoBackgroundAfterMs: yieldTimeMs,
      });
      if (outcome.kind === 'ended') {
        const exitCode = shellExitCode(finishedState(outcome.result));
        return execResult(
          this.asSeen(resultOutput(outcome.result, this.scope.host.hostId)),
          started,
          maxOutputTokens,
          { exitCode },
        );
      }
      return this.answer(this.track({ taskId, tty }), [outcome.read], started, maxOutputTokens);
    });
  }

  /**
   * Types `chars` into a running command (its terminal, or without one its stdin, where Ctrl-C
   * kills it as `bash_kill`) and answers what it printed within `yieldTimeMs`.
   * Empty `chars` polls. An id the session does not know answers as the SDK's UnixLocal session
   * does, as text: the shell capability's `write_stdin` gives the model a thrown error only as its
   * generic "An error occurred while running the tool", which would hide which id was wrong.
   */
  writeStdin(args: WriteStdinArgs): Promise<string> {
    return sandboxCall(async () => {
      const started = Date.now();
      this.assertOpen();
      if (!Number.isSafeInteger(args.sessionId))
        throw new SandboxConfigurationError(
          `invalid sessionId: expected the integer an exec answered with, got ${JSON.stringify(args.sessionId)}`,
        );
      const yieldTimeMs = yieldOf(args.yieldTimeMs, DEFAULT_WRITE_STDIN_YIELD_TIME_MS);
      const maxOutputTokens = maxTokensOf(args.maxOutputTokens);
      const chars = args.chars ?? '';
      if (typeof chars !== 'string')
        throw new SandboxConfigurationError(`invalid chars: expected a string, got ${typeof chars}`);
      const process = this.state.processes[String(args.sessionId)];
      if (process === undefined)
        return formatExecResponse({
          output: `write_stdin failed: session not found: ${args.sessionId}`,
          wallTimeSeconds: 0,
          exitCode: 1,
        });
      const { taskId } = process;
      if (chars !== '') await this.type(taskId, process.tty, chars);
      const reads = await this.readFor(taskId, Date.now() + yieldTimeMs);
      return formatExecResponse(this.answer(args.sessionId, reads, started, maxOutputTokens));
    });
  }

  /**
   * Sends `chars` to a running command: into its terminal, or to its stdin. A pipe has no line
   * discipline to turn Ctrl-C into SIGINT: UnixLocal signals the command, here it is killed as
   * `bash_kill` kills (the whole tree), and the rest is not sent. A command that ended before the
   * chars reached it is no error: the answer that follows tells its end.
   */
  private async type(taskId: TaskId, tty: boolean, chars: string): Promise<void> {
    if (!tty && chars.includes(CTRL_C)) {
      await this.commands.tasks.kill(taskId, this.state.sessionId);
      return;
    }
    const written = await this.commands.tasks.writeStdin(taskId, this.state.sessionId, {
      text: chars,
      close: false,
    });
    if (written.kind !== 'ended') inputText(taskId, written, false);
  }

  /**
   * Reads the task until it ends or `deadline` passes. Each read moves the durable read position
   * past what it returned, so nothing read here comes again, in this process or any other.
   */
  private async readFor(taskId: TaskId, deadline: number): Promise<OutputRead[]> {
    const reads: OutputRead[] = [];
    for (;;) {
      const waitMs = Math.min(this.commands.maxWaitMs, Math.max(0, deadline - Date.now()));
      const read = await this.commands.tasks.read(taskId, this.state.sessionId, { waitMs, terminal: 'raw' });
      reads.push(read);
      if (read.state.status !== 'running' || read.unclaimed || Date.now() >= deadline) return reads;
    }
  }

  /** The answer of reads of a tracked process: its end (and the id given up), or that it runs on. */
  private answer(
    processId: number,
    reads: OutputRead[],
    started: number,
    maxOutputTokens: number | undefined,
  ): SandboxExecResult {
    const state = reads.at(-1)?.state ?? { status: 'running' };
    const output = this.asSeen(readsOutput(reads, this.scope.host.hostId));
    if (state.status === 'running')
      return execResult(output, started, maxOutputTokens, { sessionId: processId });
    delete this.state.processes[String(processId)];
    return execResult(output, started, maxOutputTokens, { exitCode: shellExitCode(state) });
  }

  private track(process: SandboxProcess): number {
    const processId = this.state.nextProcessId;
    this.state.nextProcessId += 1;
    this.state.processes[String(processId)] = process;
    return processId;
  }

  /**
   * A path as the workspace knows it: one under the manifest's root (what the model is told its
   * workspace is) taken relative to it; any other stands as given, for the workspace's fence.
   */
  private workspacePath(filePath: string): string {
    const { root } = this.state.manifest;
    if (filePath === root) return '.';
    return filePath.startsWith(`${root}/`) ? filePath.slice(root.length + 1) : filePath;
  }

  /**
   * The command with the manifest's root, where it stands as a path, turned into the workspace's
   * directory: the SDK's UnixLocal session does the same, so `cd /workspace` works in both.
   */
  private onHost(command: string): string {
    const root = escapeRegExp(this.state.manifest.root);
    return command.replace(
      new RegExp(`(^|[\\s"'=<>])${root}(?=$|[/\\s"'|&;<>(){}])`, 'g'),
      (_match, prefix: string) => `${prefix}${this.state.workspaceRoot}`,
    );
  }

  /** Output with the workspace's directory named by the manifest's root, as the model knows it. */
  private asSeen(output: ExecOutput): ExecOutput {
    const swap = (text: string) => text.split(this.state.workspaceRoot).join(this.state.manifest.root);
    return {
      ...output,
      output: swap(output.output),
      stdout: swap(output.stdout),
      stderr: swap(output.stderr),
    };
  }

  async readFile(args: ReadFileArgs): Promise<Uint8Array> {
    return sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(args.runAs);
      return this.files.readFile(this.workspace, this.workspacePath(args.path), {
        ...(args.maxBytes !== undefined ? { maxBytes: args.maxBytes } : {}),
      });
    });
  }

  /**
   * The image's bytes as the SDK's image output. Its refusals say "not found", "not a file" or
   * "exceeded the allowed size", the words the filesystem capability's `view_image` turns into its
   * own line for the model (it names its 10 MB limit; a read here returns at most
   * WORKSPACE_TRANSFER_MAX_BYTES); any other refusal reaches the model only as its class's name.
   */
  async viewImage(args: ViewImageArgs) {
    const bytes = await sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(args.runAs);
      return this.files
        .readFile(this.workspace, this.workspacePath(args.path), { maxBytes: MAX_VIEW_IMAGE_BYTES })
        .catch((err: unknown) => {
          if (err instanceof WorkspaceFileNotFoundError)
            throw new SandboxWorkspaceReadNotFoundError(`image not found in the workspace: ${args.path}`, {
              path: args.path,
            });
          if (err instanceof WorkspaceIsADirectoryError)
            throw new SandboxWorkspaceWriteTypeError(`image path is not a file: ${args.path}`, {
              path: args.path,
            });
          if (err instanceof WorkspaceFileTooLargeError)
            throw new SandboxRuntimeError(
              `image ${args.path} is ${err.size} bytes: it exceeded the allowed size of ${err.limit} bytes a read returns`,
            );
          throw err;
        });
    });
    return imageOutputFromBytes(args.path, bytes);
  }

  /** The directory's entries, their paths relative to the workspace as the SDK's own sessions give them. */
  async listDir(args: ListDirectoryArgs): Promise<SandboxDirectoryEntry[]> {
    return sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(args.runAs);
      const entries = await this.files.list(this.workspace, this.workspacePath(args.path));
      return entries.map((entry) => ({
        name: entry.name,
        path: path.relative(this.state.workspaceRoot, entry.path),
        type: entry.type === 'file' || entry.type === 'dir' ? entry.type : 'other',
      }));
    });
  }

  async pathExists(filePath: string, runAs?: string): Promise<boolean> {
    return sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(runAs);
      return (await this.files.stat(this.workspace, this.workspacePath(filePath))) !== undefined;
    });
  }

  async directoryExists(filePath: string, runAs?: string): Promise<boolean> {
    return sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(runAs);
      return (await this.files.stat(this.workspace, this.workspacePath(filePath)))?.type === 'dir';
    });
  }

  /** Writes one manifest entry (a file, a directory and its children, a local file or directory) and adds it to the manifest. */
  async materializeEntry(args: MaterializeEntryArgs): Promise<void> {
    return sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(args.runAs);
      assertEntrySupported(args.path, args.entry);
      const relative = path.relative(
        this.state.workspaceRoot,
        this.files.resolve(this.workspace, this.workspacePath(args.path)),
      );
      await this.write(await this.plan({ [relative]: args.entry }));
      this.state.manifest = withEntries(this.state.manifest, { [relative]: args.entry });
    });
  }

  /** Writes every entry of `manifest` into the workspace and adds them to the session's manifest. */
  async applyManifest(manifest: Manifest, runAs?: string): Promise<void> {
    return sandboxCall(async () => {
      this.assertOpen();
      checkRunAs(runAs);
      assertManifestSupported(manifest);
      await this.write(await this.plan(manifest.entries));
      this.state.manifest = withEntries(this.state.manifest, manifest.entries);
    });
  }

  /**
   * What writing `entries` takes, checked before the first write (every path in the workspace,
   * every local source readable and within the limits): a manifest applies whole or not at all.
   * The local sources' files are read as they are written, not held.
   */
  private async plan(entries: Manifest['entries']): Promise<EntryWrite[]> {
    // The archive limits bound what local sources carry in all: undefined is the SDK's default, null none.
    const limits = limitsOf(this.archiveLimits);
    const budget: CopyBudget = {
      maxBytes:
        limits?.maxExtractedBytes === undefined
          ? DEFAULT_ARCHIVE_LIMITS.maxExtractedBytes
          : limits.maxExtractedBytes,
      maxMembers: limits?.maxMembers === undefined ? DEFAULT_ARCHIVE_LIMITS.maxMembers : limits.maxMembers,
      bytes: 0,
      members: 0,
    };
    const writes: EntryWrite[] = [];
    const planEntry = async (entryPath: string, entry: MaterializeEntryArgs['entry']): Promise<void> => {
      this.files.resolve(this.workspace, entryPath);
      if (entry.type === 'file') {
        const content =
          typeof entry.content === 'string' ? new TextEncoder().encode(entry.content) : entry.content;
        writes.push({ path: entryPath, bytes: async () => content, mode: modeOf(entry) });
      } else if (entry.type === 'dir') {
        writes.push({ path: entryPath });
        for (const [name, child] of Object.entries(entry.children ?? {}))
          await planEntry(path.posix.join(entryPath, name), child);
      } else if (entry.type === 'local_file' || entry.type === 'local_dir') {
        const { type } = entry;
        for (const item of await planLocalEntry(type, entry.src, budget)) {
          const itemPath = item.path === '' ? entryPath : path.posix.join(entryPath, item.path);
          this.files.resolve(this.workspace, itemPath);
          // As UnixLocal: the entry's permissions on a local file; a directory's files as written.
          if (item.kind === 'dir') writes.push({ path: itemPath });
          else
            writes.push({
              path: itemPath,
              bytes: () => readLocalFile(type, item),
              ...(item.path === '' ? { mode: modeOf(entry) } : {}),
            });
        }
      } else throw unsupportedEntry(entryPath, entry.type);
    };
    for (const [entryPath, entry] of Object.entries(entries)) await planEntry(entryPath, entry);
    return writes;
  }

  private async write(writes: EntryWrite[]): Promise<void> {
    for (const { path: entryPath, bytes, mode } of writes) {
      if (bytes === undefined) await this.files.mkdir(this.workspace, entryPath, { recursive: true });
      else
        await this.files.writeFile(this.workspace, entryPath, await bytes(), {
          ...(mode !== undefined ? { mode } : {}),
        });
    }
  }

  /** The workspace as a tar archive, within the session's archive limits. */
  async persistWorkspace(): Promise<Uint8Array> {
    return sandboxCall(async () => {
      this.assertOpen();
      // The manifest's ephemeral entries stay out, as the SDK's own sessions leave them out.
      return this.files.archive(this.workspace, limitsOf(this.archiveLimits), {
        exclude: [...this.state.manifest.ephemeralPersistencePaths()],
      });
    });
  }

  /** Replaces the workspace's contents with an archive `persistWorkspace` made, within the archive limits. */
  async hydrateWorkspace(data: WorkspaceArchiveData, options: WorkspaceArchiveOptions = {}): Promise<void> {
    return sandboxCall(async () => {
      this.assertOpen();
      const limits = options.archiveLimits === undefined ? this.archiveLimits : options.archiveLimits;
      validateSandboxArchiveLimits(limits);
      await this.files.extract(this.workspace, archiveBytes(data), limitsOf(limits));
    });
  }

  /** The filesystem capability's editor (`apply_patch`): the SDK's diff, applied to workspace files. */
  createEditor(runAs?: string): Editor {
    checkRunAs(runAs);
    const at = (filePath: string) => this.workspacePath(filePath);
    const read = async (filePath: string) =>
      new TextDecoder().decode(await this.files.readFile(this.workspace, at(filePath)));
    const write = (filePath: string, text: string) =>
      this.files.writeFile(this.workspace, at(filePath), new TextEncoder().encode(text));
    return {
      createFile: (operation) =>
        sandboxCall(() => write(operation.path, applyDiff('', operation.diff, 'create'))),
      updateFile: (operation) =>
        sandboxCall(async () => {
          const destination = operation.moveTo ?? operation.path;
          const moved =
            this.files.resolve(this.workspace, at(destination)) !==
            this.files.resolve(this.workspace, at(operation.path));
          await write(destination, applyDiff(await read(operation.path), operation.diff));
          if (moved) await this.files.remove(this.workspace, at(operation.path));
        }),
      deleteFile: (operation) => sandboxCall(() => this.files.remove(this.workspace, at(operation.path))),
    };
  }

  /** Leaves the session's tasks running and its workspace in place: `resume` finds both. */
  async stop(): Promise<void> {}

  /** Kills the session's tasks (each whole tree, as `bash_kill`) and removes its workspace. */
  shutdown(): Promise<void> {
    this.closing ??= sandboxCall(async () => {
      const known = Object.values(this.state.processes).map((process) => process.taskId);
      await this.commands.killAll(this.scope, known);
      this.state.processes = {};
      await this.files.destroy(this.workspace);
    });
    return this.closing;
  }

  /** As `shutdown`. */
  delete(): Promise<void> {
    return this.shutdown();
  }

  private assertOpen(): void {
    if (this.closing !== undefined)
      throw new SandboxLifecycleError(`sandbox session ${this.state.sessionId} was shut down`);
  }
}

/** `yieldTimeMs` checked: absent gives the SDK's default. */
function yieldOf(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new SandboxConfigurationError(
      `invalid yieldTimeMs: expected a number of milliseconds >= 0, got ${JSON.stringify(value)}`,
    );
  return value;
}

function maxTokensOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new SandboxConfigurationError(
      `invalid maxOutputTokens: expected an integer >= 1, got ${JSON.stringify(value)}`,
    );
  return value;
}

/** A shell the session can run `cmd` in: a plain name or path, with no quoting to get wrong. */
const SHELL_NAME = /^[\w./+-]{1,200}$/;

/**
 * The command the task runs. Every task is `bash -c <command>` (the `bash` tool's rule), so
 * `shell` bash (by name or path) runs `cmd` as it is, and another shell runs as
 * `<shell> -c '<cmd>'` in it (the permission policy reads through that, as it does for `sh -c`).
 * `login` changes nothing: no profile is read, as for every `bash` call. `runAs` is refused (see
 * `checkRunAs`).
 */
function commandLine(args: ExecCommandArgs): string {
  if (typeof args.cmd !== 'string' || args.cmd.trim() === '')
    throw new SandboxConfigurationError(
      `invalid cmd: expected a non-blank string, got ${JSON.stringify(args.cmd)}`,
    );
  checkRunAs(args.runAs);
  const { shell } = args;
  if (shell === undefined || shell === '' || path.posix.basename(shell) === 'bash') return args.cmd;
  if (!SHELL_NAME.test(shell))
    throw new SandboxConfigurationError(
      `invalid shell: expected a shell's name or path (letters, digits, '.', '/', '_', '+', '-'), got ${JSON.stringify(shell)}`,
    );
  return `${shell} -c ${singleQuoted(args.cmd)}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Every command and file call of a session runs as the session's own identity (its uid when
 * sessions are apart, else the worker's): another user would cross the fence between sessions.
 */
function checkRunAs(runAs: string | undefined): void {
  if (runAs === undefined || runAs.trim() === '') return;
  throw new SandboxConfigurationError(
    `invalid runAs: ${JSON.stringify(runAs)}; a durable-bash session runs everything as its own identity, so runAs must be left out`,
  );
}

function execResult(
  output: ExecOutput,
  started: number,
  maxOutputTokens: number | undefined,
  end: { exitCode: number } | { sessionId: number },
): SandboxExecResult {
  const cut = cutToTokens(output.output, maxOutputTokens, output.spillPath);
  return {
    output: cut.text,
    stdout: output.stdout,
    stderr: output.stderr,
    wallTimeSeconds: (Date.now() - started) / 1000,
    ...end,
    ...(cut.originalTokenCount !== undefined ? { originalTokenCount: cut.originalTokenCount } : {}),
  };
}

/** The SDK's archive limits as the workspace takes them: undefined is the SDK's defaults, null none at all. */
function limitsOf(limits: SandboxArchiveLimits | null | undefined): SandboxArchiveLimits | undefined {
  return limits === null ? { maxInputBytes: null, maxExtractedBytes: null, maxMembers: null } : limits;
}

function archiveBytes(data: WorkspaceArchiveData): Uint8Array {
  if (typeof data === 'string') return new Uint8Array(Buffer.from(data, 'base64'));
  return data instanceof Uint8Array ? data : new Uint8Array(data);
}

/** The manifest with `entries` added (a later entry at a path replaces the earlier one). */
function withEntries(manifest: Manifest, entries: Manifest['entries']): Manifest {
  return manifestWith(manifest, { entries: { ...manifest.entries, ...entries } });
}

/** A copy of the manifest with another root or other entries. */
export function manifestWith(
  manifest: Manifest,
  change: { root?: string; entries?: Manifest['entries'] },
): Manifest {
  return new Manifest({
    version: manifest.version,
    root: change.root ?? manifest.root,
    entries: change.entries ?? manifest.entries,
    environment: manifest.environment,
    users: manifest.users,
    groups: manifest.groups,
    extraPathGrants: manifest.extraPathGrants,
    remoteMountCommandAllowlist: manifest.remoteMountCommandAllowlist,
  });
}

function unsupportedEntry(entryPath: string, type: string): SandboxUnsupportedFeatureError {
  return new SandboxUnsupportedFeatureError(
    `manifest entry ${entryPath} is a ${type}; a durable-bash workspace takes files, directories, local files and local directories only`,
    { feature: `manifest.entries.${type}`, path: entryPath },
  );
}

/** The entry types a workspace takes: the rest (git repositories, mounts) need the host to fetch or mount. */
const SUPPORTED_ENTRY_TYPES: ReadonlySet<string> = new Set(['file', 'dir', 'local_file', 'local_dir']);

function assertEntrySupported(entryPath: string, entry: MaterializeEntryArgs['entry']): void {
  if (!SUPPORTED_ENTRY_TYPES.has(entry.type)) throw unsupportedEntry(entryPath, entry.type);
  if (entry.type !== 'dir') return;
  for (const [name, child] of Object.entries(entry.children ?? {}))
    assertEntrySupported(path.posix.join(entryPath, name), child);
}

/** One write of a manifest's entries: a directory, or a file (its bytes fetched when it is written). */
interface EntryWrite {
  path: string;
  bytes?: () => Promise<Uint8Array>;
  mode?: number;
}

/** A file entry's mode, as UnixLocal sets it: its `permissions`, 0755 by default (the SDK's default permissions). */
function modeOf(entry: MaterializeEntryArgs['entry']): number {
  return permissionsForSandboxEntry(entry.permissions).toMode() & 0o777;
}

/**
 * Refuses what a durable-bash workspace cannot do, before anything is written: entries other than
 * files, directories, local files and local directories (git repositories, mounts), environment variables (a task
 * runs in its worker's per-session environment, as every `bash` call), users, groups and path grants.
 */
export function assertManifestSupported(manifest: Manifest): void {
  if (manifest.root === '/')
    throw new SandboxUnsupportedFeatureError(
      "the manifest's root is /; a durable-bash workspace is a directory, so its root must be one too (the default /workspace names it)",
      { feature: 'manifest.root' },
    );
  for (const [entryPath, entry] of Object.entries(manifest.entries)) assertEntrySupported(entryPath, entry);
  const refuse = (feature: string, what: string) => {
    throw new SandboxUnsupportedFeatureError(
      `the manifest has ${what}; a durable-bash session does not take them`,
      {
        feature,
      },
    );
  };
  if (Object.keys(manifest.environment).length > 0) refuse('manifest.environment', 'environment variables');
  if (manifest.users.length > 0) refuse('manifest.users', 'users');
  if (manifest.groups.length > 0) refuse('manifest.groups', 'groups');
  if (manifest.extraPathGrants.length > 0) refuse('manifest.extraPathGrants', 'extra path grants');
}
