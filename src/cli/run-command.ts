import path from 'node:path';
import { connectClient } from '../client/connect.js';
import { createBashTools } from '../tools/create-bash-tools.js';
import type { Tool } from '../tools/types.js';
import type { ServerOptions } from './options.js';

export interface RunFlags extends ServerOptions {
  timeoutMs?: number;
  workdir?: string;
}

/**
 * Runs one foreground command through the `bash` tool and prints exactly what the model would see.
 * Resolves to the process exit code: 0 for a result, 1 for an error result.
 */
export async function runCommand(words: string[], flags: RunFlags): Promise<number> {
  const client = await connectClient({ address: flags.address, namespace: flags.namespace });
  try {
    const [bash] = createBashTools({ client, taskQueue: flags.taskQueue }) as [Tool];
    const result = await abortOnSigint((signal) =>
      bash.execute(
        {
          command: words.join(' '),
          description: 'Run a command from the durable-bash CLI',
          ...(flags.timeoutMs !== undefined ? { timeoutMs: flags.timeoutMs } : {}),
          // A relative --workdir means relative to where the user typed it.
          ...(flags.workdir !== undefined ? { workdir: path.resolve(flags.workdir) } : {}),
        },
        { signal },
      ),
    );
    const text = result.content.map((block) => block.text).join('');
    (result.isError ? process.stderr : process.stdout).write(text.endsWith('\n') ? text : `${text}\n`);
    return result.isError ? 1 : 0;
  } finally {
    await client.connection.close();
  }
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
