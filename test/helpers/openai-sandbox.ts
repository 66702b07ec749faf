/** A dev server, a command worker of its own connection, and a `DurableBashSandboxClient` over them, for a file. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import { DurableBashSandboxClient } from '../../src/openai-agents/index.js';
import { type RunningWorker, startBashWorker } from './bash-worker.js';
import { useDevServer } from './temporal-env.js';

/** The file's sandbox client (set in `beforeAll`), its server and the task queue its worker serves. */
export function useOpenAiSandbox(name: string) {
  const server = useDevServer();
  const taskQueue = `test-${name}-${process.pid}`;
  const sandbox = { server, taskQueue, client: undefined as unknown as DurableBashSandboxClient };
  let worker: RunningWorker | undefined;
  let connection: NativeConnection | undefined;
  beforeAll(async () => {
    connection = await NativeConnection.connect({ address: server.env.address });
    const spillDir = mkdtempSync(path.join(os.tmpdir(), `durable-bash-${name}-spill-`));
    worker = await startBashWorker(
      server.env,
      { hostId: `${name}-host-${process.pid}`, spillDir },
      taskQueue,
      connection,
    );
    sandbox.client = new DurableBashSandboxClient({ client: server.env.client, taskQueue });
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
  });
  return sandbox;
}
