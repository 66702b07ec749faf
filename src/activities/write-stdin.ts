/** The stdin activity: text, keys, a resize or a close for a running command's stdin, on its host. */
import type { CompiledExecutorOptions } from '../command-host/executor-config.js';
import { writeToStdin } from '../command-host/supervisor/stdin-fifo.js';
import type { TerminalLogs } from '../command-host/terminal/terminal-logs.js';
import type { StdinWriteResult, StdinWriteTask } from '../shared/stdin.js';

/**
 * Writes to a running command's stdin on its host: into the FIFO its supervisor feeds the command
 * from, without ever blocking (the supervisor holds the FIFO open, so this survives any worker's
 * restart). Answers how many bytes went in; a full stdin (the command is not reading) takes what
 * fits. A close asks the supervisor (SIGUSR2) to close stdin once the FIFO is drained. Never
 * retried: a second attempt could write the text twice.
 */
export function createWriteStdin(config: Pick<CompiledExecutorOptions, 'spillDir'>, terminals: TerminalLogs) {
  return async function writeStdin(request: StdinWriteTask): Promise<StdinWriteResult> {
    return writeToStdin(config.spillDir, terminals, request);
  };
}
