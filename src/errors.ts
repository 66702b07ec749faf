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
