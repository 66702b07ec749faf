import path from 'node:path';
import { createBashTool } from '../tools/bash.js';
import type { ServerOptions } from './options.js';
import { printResult } from './print-result.js';
import { withTasks } from './with-client.js';

export interface RunFlags extends ServerOptions {
  timeoutMs?: number;
  workdir?: string;
  background?: boolean;
  /** With `background`: the command's stdin stays open for `durable-bash input`. */
  keepStdinOpen?: boolean;
  onHostLoss?: string;
  /** The session the command runs as, in the foreground as in the background (see identity.ts). */
  owner: string;
  /** Run on a terminal, of `cols` x `rows` when given. */
  tty?: boolean;
  cols?: number;
  rows?: number;
  /** The answer's `max_output_tokens`: the head and the tail of the output, the middle cut. */
  maxOutputTokens?: number;
}

/**
 * Runs one command through the `bash` tool as session `flags.owner` (its task, and with sessions
 * apart its uid, network and /tmp, whether or not it runs in the background) and prints exactly
 * what the model would see: the run's text, or for --background the task id. Resolves to the
 * process exit code: 0 for a result, 1 for an error result.
 */
export function runCommand(words: string[], flags: RunFlags): Promise<number> {
  return withTasks(flags, async (tasks) => {
    const bash = createBashTool(tasks);
    const result = await abortOnSigint((signal) =>
      bash.execute(
        {
          command: words.join(' '),
          description: 'Run a command from the durable-bash CLI',
          ...(flags.timeoutMs !== undefined ? { timeoutMs: flags.timeoutMs } : {}),
          // A relative --workdir means relative to where the user typed it.
          ...(flags.workdir !== undefined ? { workdir: path.resolve(flags.workdir) } : {}),
          ...(flags.background ? { run_in_background: true } : {}),
          ...(flags.keepStdinOpen ? { keep_stdin_open: true } : {}),
          ...(flags.onHostLoss !== undefined ? { on_host_loss: flags.onHostLoss } : {}),
          ...(flags.tty ? { tty: true } : {}),
          ...(flags.cols !== undefined ? { cols: flags.cols } : {}),
          ...(flags.rows !== undefined ? { rows: flags.rows } : {}),
          ...(flags.maxOutputTokens !== undefined ? { max_output_tokens: flags.maxOutputTokens } : {}),
        },
        { signal, agent: { sessionId: flags.owner } },
      ),
    );
    return printResult(result);
  });
}

/** Runs `fn` with a signal that Ctrl-C aborts (the run is then stopped, not left behind). */
async function abortOnSigint<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    return await fn(abort.signal);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
