import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { ExecutorOptions } from '../activities/index.js';
import { type DevServerOptions, ensureTemporalCli, startDevServer } from '../dev-server/dev-server.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
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
  // The finally below stops the server on every normal way out; this covers an abrupt exit.
  process.once('exit', () => server.process.kill('SIGTERM'));
  try {
    const connection = await NativeConnection.connect({ address: server.address });
    try {
      const worker = await createBashWorker({ connection, taskQueue: flags.taskQueue, executor });
      const running = worker.run();
      const runFlags = [
        server.address === '127.0.0.1:7233' ? '' : ` --address ${server.address}`,
        flags.taskQueue === DEFAULT_TASK_QUEUE ? '' : ` --task-queue ${flags.taskQueue}`,
      ].join('');
      process.stdout.write(
        [
          'durable-bash dev is running',
          `  Temporal gRPC:  ${server.address}`,
          `  Temporal UI:    ${server.uiAddress}`,
          `  task queue:     ${flags.taskQueue}`,
          `  try:            ${selfInvocation()} run${runFlags} -- 'echo hi; echo err >&2; exit 3'`,
          'Ctrl-C stops the worker and the server.',
          '',
        ].join('\n'),
      );
      await running;
    } finally {
      await connection.close();
    }
  } finally {
    await server.stop();
    log('stopped');
  }
}

/** How the user can call this CLI again: the installed bin, or node with this script's path. */
function selfInvocation(): string {
  const script = process.argv[1] ?? '';
  if (path.basename(script) !== 'main.js') return 'durable-bash';
  return `node ${path.relative(process.cwd(), script) || script}`;
}
