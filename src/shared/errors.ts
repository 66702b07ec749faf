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

/** Thrown by `BashTasks.result` when the caller aborted the wait; the run has been asked to stop. */
export class RunAbortedError extends ToolCallError {
  override readonly name = 'RunAbortedError';
  constructor(readonly taskId: string) {
    super(`command aborted; task ${taskId} was stopped`);
  }
}

/** Thrown by `BashTasks.result` when a run ended without an outcome (see `TaskStatus`). */
export class RunFailedError extends ToolCallError {
  override readonly name = 'RunFailedError';
  constructor(
    readonly taskId: string,
    readonly status: 'failed' | 'lost',
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

/** Thrown by the `bash` tool when a session already runs its limit of background tasks; nothing was started. */
export class BackgroundQuotaError extends ToolCallError {
  override readonly name = 'BackgroundQuotaError';
  constructor(
    readonly running: number,
    readonly limit: number,
  ) {
    super(
      `too many background tasks: this session already runs ${running} (the limit is ${limit}); wait for one to end or kill one with bash_kill`,
    );
  }
}

/**
 * Thrown by the codec's keyring when a key is missing or unusable (bad file, bad entry), and by
 * the codec when a payload names a key the keyring does not hold or fails authentication.
 */
export class CodecKeyError extends Error {
  override readonly name = 'CodecKeyError';
}

/**
 * Thrown by `BashTasks.writeStdin` when a write to a task's stdin was refused or came to nothing:
 * its stdin is not open (or closed), its command ended or has not started, or its host did not answer.
 */
export class StdinWriteError extends ToolCallError {
  override readonly name = 'StdinWriteError';
}
