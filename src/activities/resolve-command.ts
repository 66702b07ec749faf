import path from 'node:path';
import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import type { BashTaskInput, CommandSpec } from '../shared/task.js';

/**
 * Applies the worker's executor config to a request: the workdir default and the timeout's default
 * and cap, and the host: this worker's, when it serves the command queue. A local activity, so the
 * workflow learns the effective timeout before it sets its timer.
 */
export function createResolveCommand(config: CompiledExecutorOptions) {
  return async function resolveCommand(input: BashTaskInput): Promise<CommandSpec> {
    const spec: CommandSpec = {
      taskId: input.taskId,
      command: input.command,
      workdir: path.resolve(config.defaultWorkdir, input.workdir ?? '.'),
      background: input.background,
      taskQueue: config.commandTaskQueue,
      lostAfterMs: config.lostAfterMs,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      ...hostOf(input, config),
    };
    if (input.keepStdinOpen) spec.keepStdinOpen = true;
    if (input.shownOutputBytes !== undefined) spec.shownOutputBytes = input.shownOutputBytes;
    // A terminal's typing comes through the stdin FIFO: its supervisor always makes one.
    if (input.session !== undefined) spec.session = input.session;
    if (input.terminal !== undefined)
      spec.terminal = { cols: input.terminal.cols, rows: input.terminal.rows };
    if (!input.background) {
      spec.timeoutMs = Math.min(input.timeoutMs ?? config.defaultTimeoutMs, config.maxTimeoutMs);
      spec.hostKeepsDeadline = true;
    } else if (input.keepTimeout === true) {
      // The workflow's timer keeps it, not the host: a host takes a run whose memo says background
      // for one moved there, and lets its command run past a deadline.
      spec.timeoutMs = Math.min(input.timeoutMs ?? config.defaultTimeoutMs, config.maxTimeoutMs);
    } else if (input.backgroundTimeoutMs !== undefined) {
      // The same timer, for a limit the caller set on a background run: the foreground cap is not
      // its bound (the tool checks its own).
      spec.timeoutMs = input.backgroundTimeoutMs;
    }
    return spec;
  };
}

/**
 * The host the spec names, when it is known before the start: the one the request pins (a sandbox
 * session's), or this worker's when it serves the command queue itself (no extra hop). The first
 * attempt goes eagerly on the workflow's own queue only when that queue's worker is the host.
 * Said here rather than behind a patch: the workflow already runs on a host its spec names.
 */
function hostOf(
  input: BashTaskInput,
  config: CompiledExecutorOptions,
): Pick<CommandSpec, 'hostQueue' | 'hostId' | 'eagerFirstAttempt'> {
  const servesCommands = config.commandTaskQueue === config.taskQueue;
  if (input.host !== undefined)
    return {
      hostQueue: input.host.hostQueue,
      hostId: input.host.hostId,
      ...(servesCommands && input.host.hostQueue === config.hostQueue ? { eagerFirstAttempt: true } : {}),
    };
  return servesCommands
    ? { hostQueue: config.hostQueue, hostId: config.hostId, eagerFirstAttempt: true }
    : {};
}
