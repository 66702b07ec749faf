/**
 * A sandbox session's workspace as a caller sees it (docs/SANDBOXES.md, "Workspaces"): a directory
 * on one worker host, owned by an agent session, whose files are read and written there, as the
 * session, by one `workspaceFiles` workflow per operation (one activity on the host's queue).
 */
import { randomUUID } from 'node:crypto';
import {
  ActivityFailure,
  ApplicationFailure,
  type Client,
  TimeoutFailure,
  WorkflowFailedError,
} from '@temporalio/client';
import { firstLine } from '../shared/checks.js';
import { WorkspaceOperationError, WorkspacePathError } from '../shared/errors.js';
import { WORKSPACE_OP_TIMEOUT_MS, WORKSPACE_TRANSFER_MAX_BYTES } from '../shared/limits.js';
import type { CommandHost } from '../shared/task.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import {
  WorkspaceFailureType as FailureTypes,
  type ResolvedArchiveLimits,
  type WorkspaceFailureType,
  type WorkspaceReply,
  type WorkspaceRequest,
  workspaceErrorOf,
  workspacePathOf,
} from '../shared/workspace.js';
import {
  type WorkspaceCreated,
  type WorkspaceFilesInput,
  workspaceFiles,
} from '../workflows/workspace-files.js';
import { sessionKey } from './ownership.js';
import { asClientError } from './temporal-unreachable.js';

/** A workspace: its owning session, its host, and its directory there. */
export interface SandboxWorkspace {
  sessionId: string;
  host: CommandHost;
  /** An absolute directory on the host. */
  root: string;
}

/** What a path is (`lstat`: a link is a `symlink`, never followed). */
export interface WorkspaceStat {
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  mode: number;
  mtimeMs: number;
}

export interface WorkspaceEntry {
  name: string;
  /** Absolute, under the workspace's root. */
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
}

/**
 * The OpenAI Agents SDK's `SandboxArchiveLimits`: undefined takes the SDK's default
 * (DEFAULT_ARCHIVE_LIMITS), null means none. What one operation carries
 * (WORKSPACE_TRANSFER_MAX_BYTES) bounds an archive in any case.
 */
export interface ArchiveLimits {
  maxInputBytes?: number | null;
  maxExtractedBytes?: number | null;
  maxMembers?: number | null;
}

/** The SDK's defaults (`DEFAULT_SANDBOX_ARCHIVE_LIMITS` in @openai/agents-core). */
export const DEFAULT_ARCHIVE_LIMITS: ResolvedArchiveLimits = {
  maxInputBytes: 1024 * 1024 * 1024,
  maxExtractedBytes: 4 * 1024 * 1024 * 1024,
  maxMembers: 100_000,
};

/**
 * How long a caller waits for an operation's workflow: its activities' own bounds (two for
 * `create`) and a margin for a workflow task; past it, no worker of the task queue answered.
 */
const WORKSPACE_WORKFLOW_TIMEOUT_MS = 2 * WORKSPACE_OP_TIMEOUT_MS + 10_000;

export interface WorkspaceFilesOptions {
  client: Client;
  /** The task queue whose workers pick a workspace's host and run the operations' workflows. @default DEFAULT_TASK_QUEUE */
  taskQueue?: string;
}

/**
 * The file operations of sandbox sessions' workspaces. Each refusal throws a `WorkspaceError`
 * subclass (shared/errors.ts) with one line; an unreachable server, `TemporalUnreachableError`.
 */
export class WorkspaceFiles {
  private readonly client: Client;
  private readonly taskQueue: string;

  constructor(options: WorkspaceFilesOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  /**
   * Makes a workspace for the session: a worker of the task queue picks the host, which makes the
   * directory (empty; `<workspaceDir>/<session key>/<random id>`, or `root` when given).
   */
  async create(sessionId: string, options: { root?: string } = {}): Promise<SandboxWorkspace> {
    const created = (await this.call(undefined, {
      op: 'create',
      sessionKey: sessionKey(sessionId),
      ...(options.root !== undefined ? { root: options.root } : {}),
    })) as WorkspaceCreated;
    return { sessionId, host: created.host, root: created.root };
  }

  /**
   * The absolute path `p` names in the workspace, lexically: a relative path lies under the root,
   * an absolute one must already. Throws `WorkspacePathError` for one outside (links are the host's
   * to check).
   */
  resolve(ws: SandboxWorkspace, p: string): string {
    const resolved = workspacePathOf(ws.root, p);
    if (resolved === undefined) throw new WorkspacePathError(p, `it lies outside ${ws.root}`);
    return resolved;
  }

  /** The file's bytes; `WorkspaceFileTooLargeError` over `maxBytes` (at most WORKSPACE_TRANSFER_MAX_BYTES). */
  async readFile(ws: SandboxWorkspace, p: string, options: { maxBytes?: number } = {}): Promise<Uint8Array> {
    const maxBytes = Math.min(options.maxBytes ?? WORKSPACE_TRANSFER_MAX_BYTES, WORKSPACE_TRANSFER_MAX_BYTES);
    return (await this.call(ws, {
      op: 'read',
      workspace: this.ref(ws),
      path: this.resolve(ws, p),
      maxBytes,
    })) as Uint8Array;
  }

  /** Writes the file (made, or emptied first), making its parent directories; `mode` without setuid bits. */
  async writeFile(
    ws: SandboxWorkspace,
    p: string,
    data: Uint8Array,
    options: { mode?: number } = {},
  ): Promise<void> {
    const path = this.resolve(ws, p);
    if (data.byteLength > WORKSPACE_TRANSFER_MAX_BYTES) {
      throw new WorkspaceOperationError(
        `writing ${p}: ${data.byteLength} bytes is over the ${WORKSPACE_TRANSFER_MAX_BYTES} bytes one operation carries`,
      );
    }
    await this.call(
      ws,
      {
        op: 'write',
        workspace: this.ref(ws),
        path,
        ...(options.mode !== undefined ? { mode: options.mode } : {}),
      },
      data,
    );
  }

  /** What the path is, without following a link at its end; undefined when nothing is there. */
  async stat(ws: SandboxWorkspace, p: string): Promise<WorkspaceStat | undefined> {
    const reply = (await this.call(ws, {
      op: 'stat',
      workspace: this.ref(ws),
      path: this.resolve(ws, p),
    })) as WorkspaceReply;
    return reply.op === 'stat' ? (reply.stat ?? undefined) : undefined;
  }

  /** The directory's entries, by name. */
  async list(ws: SandboxWorkspace, p: string): Promise<WorkspaceEntry[]> {
    const reply = (await this.call(ws, {
      op: 'list',
      workspace: this.ref(ws),
      path: this.resolve(ws, p),
    })) as WorkspaceReply;
    return reply.op === 'list' ? reply.entries : [];
  }

  /** Removes a file, a link (never what it points to) or an empty directory; a full one with `recursive`. */
  async remove(ws: SandboxWorkspace, p: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.call(ws, {
      op: 'remove',
      workspace: this.ref(ws),
      path: this.resolve(ws, p),
      recursive: options.recursive ?? false,
    });
  }

  /** Makes a directory; with `recursive`, its parents too, and an existing one is fine. */
  async mkdir(ws: SandboxWorkspace, p: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.call(ws, {
      op: 'mkdir',
      workspace: this.ref(ws),
      path: this.resolve(ws, p),
      recursive: options.recursive ?? false,
    });
  }

  /**
   * The workspace as the OpenAI Agents SDK persists one (`persistWorkspace`: its JSON archive,
   * version 1: directories and regular files, links left out), so it hydrates into another
   * backend. `exclude`: paths relative to the root left out, with what they hold.
   */
  async archive(
    ws: SandboxWorkspace,
    limits?: ArchiveLimits,
    options: { exclude?: readonly string[] } = {},
  ): Promise<Uint8Array> {
    return (await this.call(ws, {
      op: 'archive',
      workspace: this.ref(ws),
      limits: resolveLimits(limits),
      maxBytes: WORKSPACE_TRANSFER_MAX_BYTES,
      exclude: [...(options.exclude ?? [])],
    })) as Uint8Array;
  }

  /**
   * Restores an archive as the SDK's `hydrateWorkspace` does: the whole checked first (limits, every
   * member's path), then the workspace emptied and the members written.
   */
  async extract(ws: SandboxWorkspace, data: Uint8Array, limits?: ArchiveLimits): Promise<void> {
    const resolved = resolveLimits(limits);
    if (resolved.maxInputBytes !== null && data.byteLength > resolved.maxInputBytes) {
      throw workspaceErrorOf({
        type: FailureTypes.archiveLimit,
        facts: { limit: 'maxInputBytes', actual: data.byteLength, max: resolved.maxInputBytes },
      });
    }
    if (data.byteLength > WORKSPACE_TRANSFER_MAX_BYTES) {
      throw workspaceErrorOf({
        type: FailureTypes.archiveLimit,
        facts: { limit: 'transferBytes', actual: data.byteLength, max: WORKSPACE_TRANSFER_MAX_BYTES },
      });
    }
    await this.call(ws, { op: 'extract', workspace: this.ref(ws), limits: resolved }, data);
  }

  /**
   * The raw bytes `[start, end)` of a task's stdout or stderr, from its spill file on `hostQueue`'s
   * host (fewer when the file is shorter, none past its end); at most WORKSPACE_TRANSFER_MAX_BYTES a
   * call. Checks no ownership: `BashTasks.outputRange` does, and is what callers use.
   */
  async outputRange(
    hostQueue: string,
    range: { taskId: string; stream: 'stdout' | 'stderr'; start: number; end: number },
  ): Promise<Uint8Array> {
    const { taskId, stream, start, end } = range;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start)
      throw new RangeError(`invalid output range: expected 0 <= start <= end, got [${start}, ${end})`);
    if (end - start > WORKSPACE_TRANSFER_MAX_BYTES)
      throw new RangeError(
        `invalid output range: ${end - start} bytes is over the ${WORKSPACE_TRANSFER_MAX_BYTES} bytes one call carries`,
      );
    const input: WorkspaceFilesInput = {
      request: { op: 'outputRange', taskId, stream, start, end },
      hostQueue,
    };
    return (await this.run(input, undefined)) as Uint8Array;
  }

  /** Removes the workspace's directory and all it holds. */
  async destroy(ws: SandboxWorkspace): Promise<void> {
    await this.call(ws, { op: 'destroy', workspace: this.ref(ws) });
  }

  private ref(ws: SandboxWorkspace) {
    return { sessionKey: sessionKey(ws.sessionId), root: ws.root };
  }

  private async call(
    ws: SandboxWorkspace | undefined,
    request: WorkspaceRequest,
    data?: Uint8Array,
  ): Promise<WorkspaceReply | WorkspaceCreated | Uint8Array> {
    const input: WorkspaceFilesInput = { request, ...(ws ? { hostQueue: ws.host.hostQueue } : {}) };
    return this.run(input, data, ws?.host.hostId);
  }

  private async run(
    input: WorkspaceFilesInput,
    data: Uint8Array | undefined,
    hostId?: string,
  ): Promise<WorkspaceReply | WorkspaceCreated | Uint8Array> {
    try {
      return await this.client.workflow.execute(workspaceFiles, {
        taskQueue: this.taskQueue,
        workflowId: `workspace-op-${randomUUID()}`,
        args: data === undefined ? [input] : [input, data],
        workflowExecutionTimeout: WORKSPACE_WORKFLOW_TIMEOUT_MS,
      });
    } catch (err) {
      throw this.errorOf(err, hostId ?? input.hostQueue);
    }
  }

  /** The error a caller sees: the refusal's class, the host's silence, or an unreachable server. */
  private errorOf(err: unknown, host: string | undefined): unknown {
    if (!(err instanceof WorkflowFailedError)) return asClientError(this.client, err);
    const cause = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
    if (cause instanceof ApplicationFailure && isFailureType(cause.type)) {
      const facts = (cause.details?.[0] ?? {}) as Record<string, string | number>;
      return workspaceErrorOf({ type: cause.type, facts });
    }
    if (cause instanceof TimeoutFailure) {
      return new WorkspaceOperationError(
        err.cause instanceof ActivityFailure
          ? `no worker on the workspace's host ${host ?? `of task queue ${this.taskQueue}`} answered within ${WORKSPACE_OP_TIMEOUT_MS / 1000} s`
          : `no worker of task queue ${this.taskQueue} answered within ${WORKSPACE_WORKFLOW_TIMEOUT_MS / 1000} s`,
      );
    }
    return new WorkspaceOperationError(firstLine(cause ?? err));
  }
}

function isFailureType(type: string | undefined | null): type is WorkspaceFailureType {
  return Object.values(FailureTypes).includes(type as WorkspaceFailureType);
}

function resolveLimits(limits: ArchiveLimits | undefined): ResolvedArchiveLimits {
  const pick = (name: keyof ArchiveLimits): number | null => {
    const value = limits?.[name];
    if (value === undefined) return DEFAULT_ARCHIVE_LIMITS[name];
    if (value !== null && (!Number.isSafeInteger(value) || value < 1)) {
      throw new RangeError(`${name} must be a positive integer or null, got ${value}`);
    }
    return value;
  };
  return {
    maxInputBytes: pick('maxInputBytes'),
    maxExtractedBytes: pick('maxExtractedBytes'),
    maxMembers: pick('maxMembers'),
  };
}
