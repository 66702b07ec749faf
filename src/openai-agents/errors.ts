/**
 * durable-bash's one-line errors as the OpenAI Agents SDK's own (`Sandbox*Error` from
 * `@openai/agents-core/sandbox`), so a caller and the SDK's runtime tell them apart as they do for
 * its built-in sandboxes. The message stays ours, word for word; the class is the SDK's closest.
 */
import {
  SandboxArchiveError,
  SandboxConfigurationError,
  SandboxError,
  SandboxPathResolutionError,
  SandboxProviderError,
  SandboxPtyError,
  SandboxPtySessionNotFoundError,
  SandboxRuntimeError,
  SandboxWorkspaceArchiveReadError,
  SandboxWorkspaceReadNotFoundError,
  SandboxWorkspaceWriteTypeError,
} from '@openai/agents-core/sandbox';
import {
  BackgroundQuotaError,
  CommandDeniedError,
  CommandNotApprovedError,
  ForeignTaskError,
  InvalidArgumentsError,
  StdinWriteError,
  TemporalUnreachableError,
  UnknownTaskError,
  WorkspaceArchiveFormatError,
  WorkspaceArchiveLimitError,
  WorkspaceError,
  WorkspaceFileNotFoundError,
  WorkspaceIsADirectoryError,
  WorkspaceNotADirectoryError,
  WorkspaceOperationError,
  WorkspacePathError,
} from '../shared/errors.js';

/** Our error as the SDK's class with the same one line; anything else (a bug, an SDK error) as it came. */
export function asSandboxError(err: unknown): unknown {
  if (err instanceof SandboxError || !(err instanceof Error)) return err;
  const { message } = err;
  if (err instanceof InvalidArgumentsError) return new SandboxConfigurationError(message);
  if (err instanceof WorkspacePathError) return new SandboxPathResolutionError(message, { path: err.path });
  if (err instanceof WorkspaceFileNotFoundError)
    return new SandboxWorkspaceReadNotFoundError(message, { path: err.path });
  if (err instanceof WorkspaceNotADirectoryError || err instanceof WorkspaceIsADirectoryError)
    return new SandboxWorkspaceWriteTypeError(message, { path: err.path });
  if (err instanceof WorkspaceArchiveLimitError)
    return new SandboxArchiveError(message, { limit: err.limit, actual: err.actual, max: err.max });
  if (err instanceof WorkspaceArchiveFormatError) return new SandboxWorkspaceArchiveReadError(message);
  if (err instanceof WorkspaceOperationError || err instanceof TemporalUnreachableError)
    return new SandboxProviderError(message);
  if (err instanceof UnknownTaskError || err instanceof ForeignTaskError)
    return new SandboxPtySessionNotFoundError(message);
  if (err instanceof StdinWriteError) return new SandboxPtyError(message);
  // The permission policy, the background quota, and the rest of the workspace's refusals
  // (permission denied, exists, not empty): the command or operation was refused as it ran.
  if (
    err instanceof CommandDeniedError ||
    err instanceof CommandNotApprovedError ||
    err instanceof BackgroundQuotaError ||
    err instanceof WorkspaceError
  )
    return new SandboxRuntimeError(message);
  return err;
}

/** Runs `operation`, rethrowing our errors as the SDK's (see `asSandboxError`). */
export async function sandboxCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw asSandboxError(err);
  }
}
