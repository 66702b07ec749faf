/**
 * A command attempt's end lost on its way to the server. The command ends while the server is
 * down, and the server stays down past the SDK's own retries of the report (about 10 s), which then
 * drops it: the server would keep the attempt started until its heartbeat timeout (the default,
 * 5 minutes, here). The host keeps each end it returned until the server is seen holding it, and
 * sends this one again once the server is back. A real server, killed and started again on its
 * database, and a real worker process, never restarted.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/dev-server.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { waitFor } from '../helpers/processes.js';
import { readToEnd } from '../helpers/read-to-end.js';
import { removeDir } from '../helpers/remove-dir.js';
import { startDevServerOnFile } from '../helpers/temporal-env.js';
import { agent, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** What the SDK's core logs when it gives up on an activity's result. */
const REPORT_DROPPED = 'Network error while completing activity';

/** The command attempts' heartbeat timeout: the worker's default (5 minutes). */
const HEARTBEAT_TIMEOUT_MS = 300_000;

const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-lost-end-'));
let server: DevServer | undefined;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;

afterAll(async () => {
  await worker?.crash();
  await endLeftCommands(dir);
  await connection?.close().catch(() => undefined);
  await server?.stop();
  removeDir(dir);
});

describe("an attempt's end that the SDK gave up sending", () => {
  it('reaches the server from the host once the server is back, long before the heartbeat timeout', async () => {
    server = await startDevServerOnFile({ dbFile: path.join(dir, 'temporal.db') });
    const { place, address } = server;
    const taskQueue = `lost-end-${randomUUID()}`;
    const spillDir = path.join(dir, 'spill');
    worker = await startWorkerProcess({ address }, taskQueue, ['--spill-dir', spillDir]);
    connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const tools = toolsByName(createBashTools({ client, taskQueue }));
    const session = agent(`lost-end-${randomUUID().slice(0, 8)}`);
    const taskId = await startBackground(tools.bash, 'sleep 2; echo done; exit 3', session);

    // The server goes away once the command runs, and stays away until the SDK dropped its end.
    await waitFor(() => existsSync(path.join(spillDir, `${taskId}.state`)), 20_000);
    server.process.kill('SIGKILL');
    await server.exited;
    await waitFor(() => existsSync(path.join(spillDir, `${taskId}.exit`)), 20_000);
    const workerLog = () => `the worker said:\n${worker?.stderr()}`;
    await waitFor(() => worker?.stderr().includes(REPORT_DROPPED) === true, 60_000, 200, workerLog);
    server = await startDevServerOnFile(place);
    const backAt = Date.now();

    // The client's connection has met the server again before the reads (a read meanwhile fails).
    for (;;) {
      const answered = await client.workflow
        .getHandle(taskId)
        .describe()
        .then(
          () => true,
          () => false,
        );
      if (answered) break;
      await sleep(200);
    }
    const end = await readToEnd(tools.bash_output, taskId, session, { waitMs: 2_000, timeoutMs: 90_000 });
    expect({ output: end.output, status: end.status }, workerLog()).toEqual({
      output: 'done\n',
      status: '[status: completed, exit code: 3]',
    });
    // Sent again by the host (which says so just after): the heartbeat timeout (300 s) had no part.
    expect(Date.now() - backAt).toBeLessThan(HEARTBEAT_TIMEOUT_MS);
    const resent = `the end of task ${taskId} did not reach the server when its attempt returned it; sent again`;
    await waitFor(() => worker?.stderr().includes(resent) === true, 10_000, 50, workerLog);
  }, 240_000);
});
