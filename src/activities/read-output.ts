/** The read activity: a task's output, read on its host for `bash_output`. */
import type { AttachedTasks } from '../command-host/attached-tasks.js';
import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import { readHostOutput } from '../command-host/spill/host-reads.js';
import type { HostRead, HostReadRequest } from '../shared/read-position.js';

/**
 * Reads a running task's output from its spill files, on the command's own host: what a
 * `bash_output` call gets, fresh, at the cost of one activity, so heartbeats need not carry output.
 * Waits up to the request's `waitMs` when there is nothing new (see `readHostOutput`).
 */
export function createReadOutput(config: CompiledExecutorOptions, attached: AttachedTasks) {
  return async function readOutput(request: HostReadRequest): Promise<HostRead> {
    return readHostOutput(config, attached, request);
  };
}
