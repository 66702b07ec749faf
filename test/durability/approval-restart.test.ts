/**
 * An approval request outlives every process around it: asked by an agent host that then stops,
 * it waits while the command worker (a real process) is SIGKILLed and the Temporal server is killed
 * and started again on its database; decided then with `durable-bash approve`, it starts its run,
 * and the agent host, back, hears the decision and the run's end.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/dev-server.js';
import { createRulePolicy } from '../../src/policy/rules.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { createAgentWorker } from '../../src/worker/agent-worker.js';
import { cli } from '../helpers/cli.js';
import { NoticeInbox } from '../helpers/notices.js';
import { waitFor } from '../helpers/processes.js';
import { startDevServerOnFile } from '../helpers/temporal-env.js';
import { agent, text } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

const workers: WorkerProcess[] = [];
const connections: Array<{ close(): Promise<void> }> = [];
let server: DevServer | undefined;

afterAll(async () => {
  for (const worker of workers) await worker.crash();
  for (const connection of connections) await connection.close().catch(() => undefined);
  await server?.stop();
});

async function startServer(place: { port?: number; uiPort?: number; dbFile: string }): Promise<DevServer> {
  server = await startDevServerOnFile(place);
  return server;
}

/** An agent host's worker on `taskQueue`, delivering into `inbox`; stop() ends it. */
async function agentHost(address: string, taskQueue: string, inbox: NoticeInbox) {
  const connection = await NativeConnection.connect({ address });
  connections.push(connection);
  const worker = await createAgentWorker({ connection, taskQueue, agents: inbox });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

describe('an approval request across restarts', () => {
  it('is decided after the agent host stopped, the worker was SIGKILLed and the server restarted, and runs', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-approval-restart-'));
    const { place, address } = await startServer({ dbFile: path.join(dir, 'temporal.db') });
    const taskQueue = `approval-${randomUUID()}`;
    const agentTaskQueue = `agent-${randomUUID()}`;
    const startWorker = async () => {
      const worker = await startWorkerProcess({ address }, taskQueue, ['--spill-dir', dir]);
      workers.push(worker);
      return worker;
    };
    const worker = await startWorker();
    const connection = await Connection.connect({ address });
    connections.push(connection);
    const client = new Client({ connection });
    const tools = createBashTools({
      client,
      taskQueue,
      agentTaskQueue,
      policy: createRulePolicy({ rules: [{ prefix: 'echo deploy', action: 'ask' }], defaultAction: 'allow' }),
    });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const firstHost = await agentHost(address, agentTaskQueue, new NoticeInbox());
    const answer = text(
      await bash.execute(
        { command: 'echo deploy done', description: 'Deploy', run_in_background: true },
        agent(`session-${randomUUID()}`),
      ),
    );
    const approvalId = /^waiting for approval: (approval-[0-9a-f-]{36})$/.exec(answer)?.[1] as string;
    expect(approvalId).toBeDefined();

    // Every process around the request goes away; the server comes back on its database.
    await firstHost.stop();
    await worker.crash();
    server?.process.kill('SIGKILL');
    await server?.exited;
    await startServer(place);
    await startWorker();

    const listed = await cli(['approvals', '--address', address, '--task-queue', taskQueue]);
    expect(listed.stdout).toContain(approvalId);
    expect(
      await cli(['approve', '--address', address, '--task-queue', taskQueue, '--by', 'alice', approvalId]),
    ).toEqual({
      code: 0,
      stdout: `approved ${approvalId}\n`,
      stderr: '',
    });

    // The agent host comes back: the decision and the run's end wait for it, in order.
    const inbox = new NoticeInbox();
    const secondHost = await agentHost(address, agentTaskQueue, inbox);
    try {
      await waitFor(() => inbox.notices.length === 2, 60_000, 100);
      const taskId = /background task (bash-[0-9a-f-]{36})/.exec(inbox.notices[0]?.content ?? '')?.[1];
      expect(inbox.notices.map((notice) => notice.content)).toEqual([
        `approval ${approvalId} granted by alice: \`echo deploy done\` started as background task ${taskId}. Read its output with bash_output.`,
        `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\ndeploy done`,
      ]);
    } finally {
      await secondHost.stop();
    }
  }, 180_000);
});
