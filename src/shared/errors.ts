/** Errors durable-bash raises on purpose. Messages are one line the model (or a user) can act on. */

/**
 * An error a tool answers with: its message is the one line of an error result (`isError`), the
 * model's to read. Anything else a tool meets is a bug, and surfaces.
 */
export class ToolCallError extends Error {}

/** Thrown by argument validation when a tool call's arguments break the contract. */
export class InvalidArgumentsError extends ToolCallError {
  override readonly name = 'InvalidArgumentsError';
}

export function isInvalidArgumentsError(err: unknown): err is InvalidArgumentsError {
  return err instanceof InvalidArgumentsError;
}

/** Thrown by the client side when the Temporal server does not answer within its deadline. */
export class TemporalUnreachableError extends ToolCallError {
  override readonly name = 'TemporalUnreachableError';
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`Temporal is unreachable at ${address}: ${reason}`);
  }
}

export function isTemporalUnreachableError(err: unknown): err is TemporalUnreachableError {
  return err instanceof TemporalUnreachableError;
}

/**
 * Thrown by `resolveConnectionConfig` (so by every connect) when the connection settings cannot be
 * used: a missing profile or certificate file, bad TOML, a client certificate without its key.
 */
export class ConnectionConfigError extends Error {
  override readonly name = 'ConnectionConfigError';
  constructor(readonly reason: string) {
    super(`cannot use the Temporal connection settings: ${reason.split('\n', 1)[0]}`);
  }
}

export function isConnectionConfigError(err: unknown): err is ConnectionConfigError {
  return err instanceof ConnectionConfigError;
}

/**
 * Thrown by `createBashWorker` (and the plugin's worker) when sessions are to be kept apart
 * (`isolation: 'auto'`, the default, or `'session'`) and this host cannot: `reason` says what is
 * missing and how to get it. No worker runs commands unisolated unless told `isolation: 'none'`.
 */
export class SessionsApartUnavailableError extends Error {
  override readonly name = 'SessionsApartUnavailableError';
  constructor(readonly reason: string) {
    super(
      `sessions cannot be kept apart on this host: ${reason}; --isolation none runs commands without isolation`,
    );
  }
}

export function isSessionsApartUnavailableError(err: unknown): err is SessionsApartUnavailableError {
  return err instanceof SessionsApartUnavailableError;
}

/** Thrown by `BashTasks.result` when the caller aborted the wait; the run has been asked to stop. */
export class RunAbortedError extends ToolCallError {
  override readonly name = 'RunAbortedError';
  constructor(readonly taskId: string) {
    super(`command aborted; task ${taskId} was stopped`);
  }
}

/**
 * Thrown by `BashTasks.result` when a run ended without an outcome (see `TaskStatus`): `killed` when
 * a kill came before its command started.
 */
export class RunFailedError extends ToolCallError {
  override readonly name = 'RunFailedError';
  constructor(
    readonly taskId: string,
    readonly status: 'failed' | 'lost' | 'killed',
    message: string,
  ) {
    super(message);
  }
}

/** Thrown by task operations when no task has the id. */
export class UnknownTaskError extends ToolCallError {
  override readonly name = 'UnknownTaskError';
  constructor(readonly taskId: string) {
    super(`unknown bash task ${taskId}`);
  }
}

/** Thrown by task operations when the task belongs to another agent session. */
export class ForeignTaskError extends ToolCallError {
  override readonly name = 'ForeignTaskError';
  constructor(readonly taskId: string) {
    super(`task ${taskId} belongs to another session`);
  }
}

/**
 * Thrown by `BashTasks.waitForOutput` when the caller aborted a `bash_output` call while it waited;
 * nothing was read, so the output comes with the next read.
 */
export class ReadAbortedError extends ToolCallError {
  override readonly name = 'ReadAbortedError';
  constructor(readonly taskId: string) {
    super(`read of task ${taskId} aborted while waiting; its new output stays unread`);
  }
}

/**
 * Thrown by the `bash` tool when its permission policy denied a call, or asked with no approver
 * configured; nothing was started.
 */
export class CommandDeniedError extends ToolCallError {
  override readonly name = 'CommandDeniedError';
  constructor(readonly reason: string) {
    super(`command denied: ${reason}`);
  }
}

/** Thrown by the `bash` tool when the host did not approve a call its policy asked about; nothing was started. */
export class CommandNotApprovedError extends ToolCallError {
  override readonly name = 'CommandNotApprovedError';
  constructor(readonly reason: string) {
    super(`command not approved: ${reason}`);
  }
}

/**
 * Thrown by an approval decision or listing that cannot apply (an unknown request, one decided
 * already), or by a request that cannot be made (no notice path, too many pending).
 */
export class ApprovalError extends ToolCallError {
  override readonly name = 'ApprovalError';
}

/** The background quota's line: a refused start's error, and the notice of an approved run it refused. */
export const tooManyBackgroundTasks = (running: number, limit: number) =>
  `too many background tasks: this session already runs ${running} (the limit is ${limit}); wait for one to end or kill one with bash_kill`;

/**
 * Thrown by the `bash` tool when a session already runs its limit of background tasks (a call's own
 * start, or one approved while the call waited); nothing was started.
 */
export class BackgroundQuotaError extends ToolCallError {
  override readonly name = 'BackgroundQuotaError';
  constructor(
    readonly running: number,
    readonly limit: number,
  ) {
    super(tooManyBackgroundTasks(running, limit));
  }
}

/** A monitor (`notify_on`, `bash_monitor`) that was not set, with the one line that says why. */
export class MonitorError extends ToolCallError {
  override readonly name = 'MonitorError';
}

/** A `bash_remind` call that sets or cancels nothing, with the one line that says why. */
export class ReminderError extends ToolCallError {
  override readonly name = 'ReminderError';
}

/**
 * Thrown by the codec's keyring when a key is missing or unusable (bad file, bad entry), and by
 * the codec when a payload names a key the keyring does not hold or fails authentication.
 */
export class CodecKeyError extends Error {
  override readonly name = 'CodecKeyError';
}

/**
 * Thrown by the client when what the server holds of a task or an approval (its memo, its result,
 * an update's answer) was not encrypted while the client's codec holds keys: written by a client or
 * worker without them, it is refused, never shown.
 */
export class UnencryptedPayloadError extends ToolCallError {
  override readonly name = 'UnencryptedPayloadError';
  constructor(
    readonly subject: string,
    readonly part: string,
  ) {
    super(`${subject}: expected its ${part} encrypted with a codec key, got an unencrypted one; refused`);
  }
}

/**
 * Thrown by `BashTasks.writeStdin` when a write to a task's stdin was refused or came to nothing:
 * its stdin is not open (or closed), its command ended or has not started, or its host did not answer.
 */
export class StdinWriteError extends ToolCallError {
  override readonly name = 'StdinWriteError';
}

/**
 * Thrown by `WorkspaceFiles` (a sandbox session's workspace, src/client/workspace-files.ts) when an
 * operation is refused; each subclass keeps the facts of its refusal. The message is one line.
 */
export class WorkspaceError extends ToolCallError {
  override readonly name: string = 'WorkspaceError';
}

/**
 * Thrown by `WorkspaceFiles` when a path lies outside the workspace: `..` above its root, an
 * absolute path elsewhere, or (found on the host) a link on the way that points out.
 */
export class WorkspacePathError extends WorkspaceError {
  override readonly name = 'WorkspacePathError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`path ${path} is outside the workspace: ${reason}`);
  }
}

/** Thrown by `WorkspaceFiles` when a path names nothing (or a directory on its way is missing). */
export class WorkspaceFileNotFoundError extends WorkspaceError {
  override readonly name = 'WorkspaceFileNotFoundError';
  constructor(readonly path: string) {
    super(`no such file or directory in the workspace: ${path}`);
  }
}

/** Thrown by `WorkspaceFiles.readFile` when the file is larger than the read may return. */
export class WorkspaceFileTooLargeError extends WorkspaceError {
  override readonly name = 'WorkspaceFileTooLargeError';
  constructor(
    readonly path: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(`file ${path} is ${size} bytes, over the limit of ${limit} bytes a read returns`);
  }
}

/**
 * Thrown by `WorkspaceFiles.archive` and `extract` when the archive would pass a limit: one of the
 * caller's (`maxInputBytes`, `maxExtractedBytes`, `maxMembers`) or the largest archive there is
 * (`archiveBytes`, WORKSPACE_ARCHIVE_MAX_BYTES).
 */
export class WorkspaceArchiveLimitError extends WorkspaceError {
  override readonly name = 'WorkspaceArchiveLimitError';
  constructor(
    readonly limit: 'maxInputBytes' | 'maxExtractedBytes' | 'maxMembers' | 'archiveBytes',
    readonly actual: number,
    readonly max: number,
  ) {
    super(`workspace archive over its ${limit} limit: ${actual} > ${max}`);
  }
}

/** Thrown by `WorkspaceFiles.extract` when the data is not a workspace archive it can read. */
export class WorkspaceArchiveFormatError extends WorkspaceError {
  override readonly name = 'WorkspaceArchiveFormatError';
  constructor(readonly reason: string) {
    super(`not a workspace archive: ${reason}`);
  }
}

/** Thrown by `WorkspaceFiles` when a path that must be a directory (or lie in one) is not one. */
export class WorkspaceNotADirectoryError extends WorkspaceError {
  override readonly name = 'WorkspaceNotADirectoryError';
  constructor(readonly path: string) {
    super(`not a directory in the workspace: ${path}`);
  }
}

/** Thrown by `WorkspaceFiles.readFile` and `writeFile` when the path is a directory. */
export class WorkspaceIsADirectoryError extends WorkspaceError {
  override readonly name = 'WorkspaceIsADirectoryError';
  constructor(readonly path: string) {
    super(`is a directory in the workspace: ${path}`);
  }
}

/** Thrown by `WorkspaceFiles.mkdir` (not recursive) when the path exists. */
export class WorkspaceFileExistsError extends WorkspaceError {
  override readonly name = 'WorkspaceFileExistsError';
  constructor(readonly path: string) {
    super(`already exists in the workspace: ${path}`);
  }
}

/** Thrown by `WorkspaceFiles.remove` (not recursive) when the directory holds something. */
export class WorkspaceDirectoryNotEmptyError extends WorkspaceError {
  override readonly name = 'WorkspaceDirectoryNotEmptyError';
  constructor(readonly path: string) {
    super(`directory not empty in the workspace: ${path} (remove it with recursive: true)`);
  }
}

/** Thrown by `WorkspaceFiles` when the session's identity may not do it (its commands could not either). */
export class WorkspacePermissionError extends WorkspaceError {
  override readonly name = 'WorkspacePermissionError';
  constructor(readonly path: string) {
    super(`permission denied in the workspace: ${path}`);
  }
}

/**
 * Thrown by `WorkspaceFiles` when the operation could not run on the workspace's host (its
 * launcher or program failed), or no worker there answered within WORKSPACE_OP_TIMEOUT_MS.
 */
export class WorkspaceOperationError extends WorkspaceError {
  override readonly name = 'WorkspaceOperationError';
  constructor(readonly reason: string) {
    super(`workspace operation failed: ${reason}`);
  }
}

export function isWorkspaceError(err: unknown): err is WorkspaceError {
  return err instanceof WorkspaceError;
}
