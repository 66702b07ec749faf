/**
 * A sandbox session's workspace (docs/SANDBOXES.md, "Workspaces"): the requests its file operations
 * send to the workspace's host, their replies, the failure types both sides agree on, and the pure
 * path rule (lexical: the host checks links too). Plain data and workflow-safe: no Node built-in.
 */
import {
  WorkspaceArchiveFormatError,
  WorkspaceArchiveLimitError,
  WorkspaceDirectoryNotEmptyError,
  type WorkspaceError,
  WorkspaceFileExistsError,
  WorkspaceFileNotFoundError,
  WorkspaceFileTooLargeError,
  WorkspaceIsADirectoryError,
  WorkspaceNotADirectoryError,
  WorkspaceOperationError,
  WorkspacePathError,
  WorkspacePermissionError,
} from './errors.js';

/** A workspace as its host knows it: the owning session's key and its directory there. */
export interface WorkspaceRef {
  /** `sessionKey(sessionId)`: whose identity the operations run as (sessions apart). */
  sessionKey: string;
  /** An absolute, normalized directory on the host. */
  root: string;
}

/** What a path is, as `lstat` tells (a link is never followed for this). */
export type WorkspaceFileType = 'file' | 'dir' | 'symlink' | 'other';

export interface WorkspaceStatReply {
  type: WorkspaceFileType;
  size: number;
  mode: number;
  mtimeMs: number;
}

export interface WorkspaceEntryReply {
  name: string;
  /** Absolute, under the workspace's root. */
  path: string;
  type: WorkspaceFileType;
  size: number;
}

/**
 * The OpenAI Agents SDK's archive limits (`SandboxArchiveLimits`), each resolved: a number, or null
 * for none. The SDK's defaults fill what a caller leaves undefined.
 */
export interface ResolvedArchiveLimits {
  maxInputBytes: number | null;
  maxExtractedBytes: number | null;
  maxMembers: number | null;
}

/** One file operation in a workspace, run on its host. Paths are absolute (`resolveWorkspacePath`). */
export type WorkspaceRequest =
  /** Makes the workspace's directory (empty when new); `root` when the caller chose one. */
  | { op: 'create'; sessionKey: string; root?: string }
  /**
   * The bytes `[offset, offset + length)` of a file (fewer at its end), refused whole when the file
   * is over `maxBytes`: a file larger than one operation carries is read in such pieces.
   */
  | { op: 'read'; workspace: WorkspaceRef; path: string; maxBytes: number; offset: number; length: number }
  /**
   * The bytes travel as the operation's second argument. At `offset` 0 the file is made or emptied;
   * past it they go on a file of exactly `offset` bytes (the pieces of a larger file, in order).
   */
  | { op: 'write'; workspace: WorkspaceRef; path: string; mode?: number; offset: number }
  | { op: 'stat'; workspace: WorkspaceRef; path: string }
  | { op: 'list'; workspace: WorkspaceRef; path: string }
  | { op: 'remove'; workspace: WorkspaceRef; path: string; recursive: boolean }
  | { op: 'mkdir'; workspace: WorkspaceRef; path: string; recursive: boolean }
  /**
   * `exclude`: paths relative to the root left out, with what they hold. An archive over what one
   * operation carries is staged on the host (a `staged` reply), then fetched by `stagedRange`.
   */
  | {
      op: 'archive';
      workspace: WorkspaceRef;
      limits: ResolvedArchiveLimits;
      maxBytes: number;
      exclude: string[];
    }
  /**
   * The archive travels as the operation's second argument, or was staged on the host (`staged`,
   * by `stage`) when larger than one operation carries; the workspace is emptied first.
   */
  | { op: 'extract'; workspace: WorkspaceRef; limits: ResolvedArchiveLimits; staged?: string }
  | { op: 'destroy'; workspace: WorkspaceRef }
  /**
   * The raw bytes `[start, end)` of a task's spill file on its host (fewer when the file is shorter),
   * at most WORKSPACE_TRANSFER_MAX_BYTES: read by the worker itself, as the spill directory is its
   * own and hidden from sessions. The caller checked that the task is the session's.
   */
  | OutputRangeRequest
  | StagingRequest;

/**
 * An archive too large for one operation, staged on the workspace's host in the worker's own
 * directory (never the session's): `stage` appends a piece (the bytes as the second argument, at
 * exactly `offset`), `stagedRange` reads one back, `unstage` removes it. `id` is a random UUID
 * (the caller's for `stage`, the host's for an archive); a staged archive is its session's alone,
 * and swept an hour after its last write.
 */
export type StagingRequest =
  | { op: 'stage'; sessionKey: string; id: string; offset: number }
  | { op: 'stagedRange'; sessionKey: string; id: string; start: number; end: number }
  | { op: 'unstage'; sessionKey: string; id: string };

/** See `WorkspaceRequest`: a ranged read of a task's output (a process handle's gaps, docs/SANDBOXES.md). */
export interface OutputRangeRequest {
  op: 'outputRange';
  taskId: string;
  stream: 'stdout' | 'stderr';
  start: number;
  end: number;
}

export type WorkspaceOp = WorkspaceRequest['op'];

/**
 * The reply of an operation that returns no bytes (`read`, `outputRange`, `stagedRange` and an
 * archive within one operation return a Uint8Array).
 */
export type WorkspaceReply =
  | { op: 'create'; root: string }
  /** An archive larger than one operation carries, staged on the host under the caller's id. */
  | { op: 'staged'; id: string; size: number }
  | { op: 'stat'; stat: WorkspaceStatReply | null }
  | { op: 'list'; entries: WorkspaceEntryReply[] }
  | { op: 'done' };

/**
 * The `type` of the ApplicationFailure a refused operation ends with; the client maps each back to
 * its error class (shared/errors.ts). The facts travel as the failure's first detail.
 */
export const WorkspaceFailureType = {
  /** `{ path, reason }`: outside the workspace, lexically or through a link. */
  path: 'WorkspacePathError',
  /** `{ path }` */
  notFound: 'WorkspaceFileNotFoundError',
  /** `{ path, size, limit }` */
  tooLarge: 'WorkspaceFileTooLargeError',
  /** `{ limit, actual, max }` */
  archiveLimit: 'WorkspaceArchiveLimitError',
  /** `{ reason }` */
  archiveFormat: 'WorkspaceArchiveFormatError',
  /** `{ path }` */
  notADirectory: 'WorkspaceNotADirectoryError',
  /** `{ path }` */
  isADirectory: 'WorkspaceIsADirectoryError',
  /** `{ path }` */
  exists: 'WorkspaceFileExistsError',
  /** `{ path }` */
  notEmpty: 'WorkspaceDirectoryNotEmptyError',
  /** `{ path }`: the session's identity may not (EACCES, EPERM, EROFS). */
  permission: 'WorkspacePermissionError',
  /** `{ reason }`: the operation could not run on the host (its launcher, the program). */
  failed: 'WorkspaceOperationError',
} as const;
export type WorkspaceFailureType = (typeof WorkspaceFailureType)[keyof typeof WorkspaceFailureType];

/** A refusal as the host's program reports it: the failure's type and its facts. */
export interface WorkspaceFailure {
  type: WorkspaceFailureType;
  facts: Record<string, string | number>;
}

/** The archive format's version: the OpenAI Agents SDK's remote workspace archive (JSON). */
export const WORKSPACE_ARCHIVE_VERSION = 1;

/**
 * The absolute path `p` names in a workspace whose root is `root`, lexically (`.` and `..`
 * resolved, no link followed): a relative path lies under the root; an absolute one must already.
 * Undefined when it lies outside (the caller says so in one line).
 */
export function workspacePathOf(root: string, p: string): string | undefined {
  if (p.includes('\0')) return undefined;
  const base = normalizePosix(root);
  const full = normalizePosix(p.startsWith('/') ? p : `${base}/${p}`);
  if (full === base || base === '/' || full.startsWith(`${base}/`)) return full;
  return undefined;
}

/** `p` (absolute) with `.`, `..` and repeated slashes resolved, without a trailing slash. */
export function normalizePosix(p: string): string {
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** The error class a refusal maps to, on the client (from the failure's type and first detail). */
export function workspaceErrorOf(failure: WorkspaceFailure): WorkspaceError {
  const { facts } = failure;
  const text = (key: string) => String(facts[key] ?? '');
  const count = (key: string) => Number(facts[key] ?? 0);
  switch (failure.type) {
    case WorkspaceFailureType.path:
      return new WorkspacePathError(text('path'), text('reason'));
    case WorkspaceFailureType.notFound:
      return new WorkspaceFileNotFoundError(text('path'));
    case WorkspaceFailureType.tooLarge:
      return new WorkspaceFileTooLargeError(text('path'), count('size'), count('limit'));
    case WorkspaceFailureType.archiveLimit:
      return new WorkspaceArchiveLimitError(
        text('limit') as WorkspaceArchiveLimitError['limit'],
        count('actual'),
        count('max'),
      );
    case WorkspaceFailureType.archiveFormat:
      return new WorkspaceArchiveFormatError(text('reason'));
    case WorkspaceFailureType.notADirectory:
      return new WorkspaceNotADirectoryError(text('path'));
    case WorkspaceFailureType.isADirectory:
      return new WorkspaceIsADirectoryError(text('path'));
    case WorkspaceFailureType.exists:
      return new WorkspaceFileExistsError(text('path'));
    case WorkspaceFailureType.notEmpty:
      return new WorkspaceDirectoryNotEmptyError(text('path'));
    case WorkspaceFailureType.permission:
      return new WorkspacePermissionError(text('path'));
    case WorkspaceFailureType.failed:
      return new WorkspaceOperationError(text('reason'));
    default: {
      const unknown: never = failure.type;
      return new WorkspaceOperationError(`unknown refusal ${String(unknown)}`);
    }
  }
}
