import {
  BackgroundQuotaError,
  CommandDeniedError,
  CommandNotApprovedError,
  ForeignTaskError,
  isInvalidArgumentsError,
  isTemporalUnreachableError,
  ReadAbortedError,
  RunAbortedError,
  RunFailedError,
  StdinWriteError,
  UnknownTaskError,
} from '../errors.js';
import { type ToolResult, textResult } from './types.js';

/**
 * The error result for the failures a tool expects (bad arguments, Temporal unreachable, a run
 * that ended without an outcome, an unknown or foreign task, a call the permission policy or the
 * background quota refused, a write to stdin that came to nothing); anything else is a bug and surfaces.
 */
export function errorResult(err: unknown): ToolResult {
  if (
    isInvalidArgumentsError(err) ||
    isTemporalUnreachableError(err) ||
    err instanceof RunAbortedError ||
    err instanceof RunFailedError ||
    err instanceof UnknownTaskError ||
    err instanceof ForeignTaskError ||
    err instanceof ReadAbortedError ||
    err instanceof CommandDeniedError ||
    err instanceof CommandNotApprovedError ||
    err instanceof BackgroundQuotaError ||
    err instanceof StdinWriteError
  ) {
    return textResult(err.message, true);
  }
  throw err;
}
