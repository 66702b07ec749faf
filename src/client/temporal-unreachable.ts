import { type Client, isGrpcDeadlineError, ServiceError } from '@temporalio/client';
import { clientAddress } from '../connection/connect.js';
import { firstLine } from '../shared/checks.js';
import { TemporalUnreachableError } from '../shared/errors.js';

/**
 * The error a caller should see for `err`: `TemporalUnreachableError` (one line naming the server)
 * when no server answered in time, gRPC UNAVAILABLE (14) or DEADLINE_EXCEEDED (4); else `err`.
 */
export function asClientError(client: Client, err: unknown): unknown {
  const cause = err instanceof ServiceError ? err.cause : err;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (code === 14 || code === 4 || isGrpcDeadlineError(cause)) {
    return new TemporalUnreachableError(clientAddress(client), firstLine(cause));
  }
  return err;
}
