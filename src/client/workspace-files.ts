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
import {
  WORKSPACE_ARCHIVE_MAX_BYTES,
  WORKSPACE_FILE_MAX_BYTES,
  WORKSPACE_OP_TIMEOUT_MS,
  WORKSPACE_TRANSFER_MAX_BYTES,
} from '../shared/limits.js';
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
import { refuseUnencrypted } from './unencrypted-payloads.js';

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
 * (DEFAULT_ARCHIVE_LIMITS), null means none. The largest archive there is
 * (WORKSPACE_ARCHIVE_MAX_BYTES) bounds an archive in any case.
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

  /**
   * The file's bytes; `WorkspaceFileTooLargeError` over `maxBytes` (at most, and by default,
   * WORKSPACE_FILE_MAX_BYTES). A file over what one operation carries is read in pieces, one
   * operation each: a file that changes meanwhile may read as a mix of before and after.
   */
  async readFile(ws: SandboxWorkspace, p: string, options: { maxBytes?: number } = {}): Promise<Uint8Array> {
    const pieces: Uint8Array[] = [];
    for await (const piece of this.readPieces(ws, p, options)) pieces.push(piece);
    if (pieces.length === 1) return pieces[0] as Uint8Array;
    // A view of the joined bytes, not a second copy of up to WORKSPACE_FILE_MAX_BYTES.
    const joined = Buffer.concat(pieces);
    return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
  }

  /**
   * The file's bytes as they are read, a piece (at most WORKSPACE_TRANSFER_MAX_BYTES) per operation,
   * the next one asked for only when the consumer wants it; the first is refused as `readFile` is.
   */
  async *readPieces(
    ws: SandboxWorkspace,
    p: string,
    options: { maxBytes?: number } = {},
  ): AsyncGenerator<Uint8Array, void, undefined> {
    const maxBytes = Math.min(options.maxBytes ?? WORKSPACE_FILE_MAX_BYTES, WORKSPACE_FILE_MAX_BYTES);
    const path = this.resolve(ws, p);
    for (let offset = 0; ; ) {
      const piece = (await this.call(ws, {
        op: 'read',
        workspace: this.ref(ws),
        path,
        maxBytes,
        offset,
        length: WORKSPACE_TRANSFER_MAX_BYTES,
      })) as Uint8Array;
      // An empty file is one empty piece; a later empty one is only the end found.
      if (piece.length > 0 || offset === 0) yield piece;
      if (piece.length < WORKSPACE_TRANSFER_MAX_BYTES) return;
      offset += piece.length;
    }
  }

  /**
   * Writes the file (made, or emptied first), making its parent directories; `mode` without setuid
   * bits. A file over what one operation carries goes in pieces, in order, one operation each
   * (the mode set with the last): a reader meanwhile may see it part written, as with any write.
   */
  async writeFile(
    ws: SandboxWorkspace,
    p: string,
    data: Uint8Array,
    options: { mode?: number } = {},
  ): Promise<void> {
    const path = this.resolve(ws, p);
    if (data.byteLength > WORKSPACE_FILE_MAX_BYTES) {
      throw new WorkspaceOperationError(
        `writing ${p}: ${data.byteLength} bytes is over the ${WORKSPACE_FILE_MAX_BYTES} bytes a file write carries`,
      );
    }
    let offset = 0;
    do {
      const piece = data.subarray(offset, offset + WORKSPACE_TRANSFER_MAX_BYTES);
      const last = offset + piece.length >= data.byteLength;
      await this.call(
        ws,
        {
          op: 'write',
          workspace: this.ref(ws),
          path,
          offset,
          ...(last && options.mode !== undefined ? { mode: options.mode } : {}),
        },
        piece,
      );
      offset += piece.length;
    } while (offset < data.byteLength);
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
   * backend. `exclude`: paths relative to the root left out, with what they hold. An archive over
   * what one operation carries is staged on the host and fetched in pieces.
   */
  async archive(
    ws: SandboxWorkspace,
    limits?: ArchiveLimits,
    options: { exclude?: readonly string[] } = {},
  ): Promise<Uint8Array> {
    const made = await this.call(ws, {
      op: 'archive',
      workspace: this.ref(ws),
      limits: resolveLimits(limits),
      maxBytes: WORKSPACE_ARCHIVE_MAX_BYTES,
      exclude: [...(options.exclude ?? [])],
    });
    if (made instanceof Uint8Array) return made;
    if (made.op !== 'staged') throw new WorkspaceOperationError(`archive: unexpected reply ${made.op}`);
    const sessionKey = this.ref(ws).sessionKey;
    try {
      const archive = new Uint8Array(made.size);
      for (let start = 0; start < made.size; start += WORKSPACE_TRANSFER_MAX_BYTES) {
        const end = Math.min(made.size, start + WORKSPACE_TRANSFER_MAX_BYTES);
        const piece = (await this.call(ws, {
          op: 'stagedRange',
          sessionKey,
          id: made.id,
          start,
          end,
        })) as Uint8Array;
        if (piece.length !== end - start)
          throw new WorkspaceOperationError(
            `archive: the staged archive ${made.id} ended at ${start + piece.length} of ${made.size} bytes`,
          );
        archive.set(piece, start);
      }
      return archive;
    } finally {
      await this.call(ws, { op: 'unstage', sessionKey, id: made.id }).catch(() => undefined);
    }
  }

  /**
   * Restores an archive as the SDK's `hydrateWorkspace` does: the whole checked first (limits, every
   * member's path), then the workspace emptied and the members written. An archive over what one
   * operation carries is staged on the host in pieces first.
   */
  async extract(ws: SandboxWorkspace, data: Uint8Array, limits?: ArchiveLimits): Promise<void> {
    const resolved = resolveLimits(limits);
    if (resolved.maxInputBytes !== null && data.byteLength > resolved.maxInputBytes) {
      throw workspaceErrorOf({
        type: FailureTypes.archiveLimit,
        facts: { limit: 'maxInputBytes', actual: data.byteLength, max: resolved.maxInputBytes },
      });
    }
    if (data.byteLength > WORKSPACE_ARCHIVE_MAX_BYTES) {
      throw workspaceErrorOf({
        type: FailureTypes.archiveLimit,
        facts: { limit: 'archiveBytes', actual: data.byteLength, max: WORKSPACE_ARCHIVE_MAX_BYTES },
      });
    }
    const request = { op: 'extract', workspace: this.ref(ws), limits: resolved } as const;
    if (data.byteLength <= WORKSPACE_TRANSFER_MAX_BYTES) {
      await this.call(ws, request, data);
      return;
    }
    const sessionKey = this.ref(ws).sessionKey;
    const id = randomUUID();
    try {
      for (let offset = 0; offset < data.byteLength; offset += WORKSPACE_TRANSFER_MAX_BYTES) {
        const piece = data.subarray(offset, offset + WORKSPACE_TRANSFER_MAX_BYTES);
        await this.call(ws, { op: 'stage', sessionKey, id, offset }, piece);
      }
    } catch (err) {
      await this.call(ws, { op: 'unstage', sessionKey, id }).catch(() => undefined);
      throw err;
    }
    // The host takes the staged archive whatever the extract comes to.
    await this.call(ws, { ...request, staged: id });
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
    const workflowId = `workspace-op-${randomUUID()}`;
    let reply: WorkspaceReply | WorkspaceCreated | Uint8Array;
    try {
      reply = await this.client.workflow.execute(workspaceFiles, {
        taskQueue: this.taskQueue,
        workflowId,
        args: data === undefined ? [input] : [input, data],
        workflowExecutionTimeout: WORKSPACE_WORKFLOW_TIMEOUT_MS,
      });
    } catch (err) {
      throw this.errorOf(err, hostId ?? input.hostQueue);
    }
    return refuseUnencrypted(reply, `workspace operation ${workflowId}`, 'reply');
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
