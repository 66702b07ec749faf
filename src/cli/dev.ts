import { NativeConnection } from '@temporalio/worker';
import type { ExecutorOptions } from '../activities/index.js';
import { type DevServerOptions, ensureTemporalCli, startDevServer } from '../dev-server/dev-server.js';
import { createBashWorker } from '../worker/bash-worker.js';

export interface DevFlags extends DevServerOptions {
  taskQueue: string;
}

/**
 * `durable-bash dev`: a local Temporal dev server (state kept in a file), the search attributes,
 * and a command worker, until Ctrl-C stops them all.
 */
export async function runDev(flags: DevFlags, executor: ExecutorOptions): Promise<void> {
  const log = (line: string) => process.stderr.write(`durable-bash: ${line}\n`);
  const cli = ensureTemporalCli(log);
  log('starting the Temporal dev server');
  const server = await startDevServer(cli, flags);
  // Ctrl-C reaches the whole foreground process group; this makes sure a plain SIGTERM to us also
  // ends the server, and that it never outlives us.
  const stopServer = () => void server.stop();
  process.once('exit', () => server.process.kill('SIGTERM'));
  try {
    const connection = await NativeConnection.connect({ address: server.address });
    try {
      const worker = await createBashWorker({ connection, taskQueue: flags.taskQueue, executor });
      const running = worker.run();
      const queueFlag = flags.taskQueue === 'durable-bash' ? '' : ` --task-queue ${flags.taskQueue}`;
      process.stdout.write(
        [
          'durable-bash dev is running',
          `  Temporal gRPC:  ${server.address}`,
          `  Temporal UI:    ${server.uiAddress}`,
          `  task queue:     ${flags.taskQueue}`,
          '  try:           ',
          `    npx durable-bash run --address ${server.address}${queueFlag} -- 'echo hi; echo err >&2; exit 3'`,
          'Ctrl-C stops the worker and the server.',
          '',
        ].join('\n'),
      );
      await running;
    } finally {
      await connection.close();
    }
  } finally {
    stopServer();
    await server.stop();
    log('stopped');
  }
}
