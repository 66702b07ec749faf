/** Errors durable-bash raises on purpose. Messages are one line the model (or a user) can act on. */

/** Thrown by argument validation when a tool call's arguments break the contract. */
export class InvalidArgumentsError extends Error {
  override readonly name = 'InvalidArgumentsError';
}

export function isInvalidArgumentsError(err: unknown): err is InvalidArgumentsError {
  return err instanceof InvalidArgumentsError;
}

/** Thrown by the client side when the Temporal server does not answer within its deadline. */
export class TemporalUnreachableError extends Error {
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

/** Thrown by `BashTasks.result` when the caller aborted the wait; the run has been asked to stop. */
export class RunAbortedError extends Error {
  override readonly name = 'RunAbortedError';
  constructor(readonly taskId: string) {
    super(`command aborted; task ${taskId} was stopped`);
  }
}

/** Thrown by `BashTasks.result` when a run ended without an outcome (see `TaskStatus`). */
export class RunFailedError extends Error {
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
export class UnknownTaskError extends Error {
  override readonly name = 'UnknownTaskError';
  constructor(readonly taskId: string) {
    super(`unknown task ${taskId}`);
  }
}

/** Thrown by task operations when the task belongs to another agent session. */
export class ForeignTaskError extends Error {
  override readonly name = 'ForeignTaskError';
  constructor(readonly taskId: string) {
    super(`task ${taskId} belongs to another session`);
  }
}
