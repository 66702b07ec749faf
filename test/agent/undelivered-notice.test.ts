/**
 * A completion notice whose window ran out (no agent worker took it): `bash_list` shows its task to
 * the owning session, marked `(notice not delivered)`, in the default listing and with `all`, until
 * a `bash_output` read shows the task's end. On the dev server (visibility queries), with a 2 s window.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { type CodecKey, CodecKeyring } from '../../src/codec/keyring.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import type { AgentSessions } from '../../src/shared/notice.js';
import {
  NOTICE_UNDELIVERED,
  noticeSearchAttribute,
  ownerSearchAttribute,
} from '../../src/shared/search-attributes.js';
import type { ToolResult } from '../../src/shared/tool-types.js';
import { createBashKillTool } from '../../src/tools/bash-kill.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { createBashWorker } from '../../src/worker/bash-worker.js';
import type { completionNotice } from '../../src/workflows/completion-notice.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';

const WINDOW_MS = 2_000;

let env: TestWorkflowEnvironment;
let commandWorker: RunningWorker;
const agentWorkers: RunningWorker[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
  commandWorker = await startBashWorker(env);
});

afterEach(async () => {
  await Promise.all(agentWorkers.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  await commandWorker?.stop();
  await env?.teardown();
});

/** An agent host's tools, with a short notice window; its agent worker only when `agents` is given. */
async function agentHost(
  agents?: AgentSessions,
  client: Client = env.client,
  taskQueue = commandWorker.taskQueue,
) {
  const agentTaskQueue = `agent-${randomUUID()}`;
  const tools = toolsByName(
    createBashTools({ client, taskQueue, agentTaskQueue, noticeWindowMs: WINDOW_MS }),
  );
  if (agents !== undefined)
    agentWorkers.push(await startAgentWorker(env, { taskQueue: agentTaskQueue, agents }));
  return tools;
}

const session = () => `session-${randomUUID()}`;

const notice = (taskId: string, client = env.client) =>
  client.workflow.getHandle<typeof completionNotice>(`${taskId}-notice`);

/** Waits for the task's end and its notice's outcome. */
async function noticeOutcome(taskId: string, client = env.client): Promise<string> {
  await client.workflow
    .getHandle(taskId)
    .result()
    .catch(() => undefined);
  return notice(taskId, client).result();
}

/** Waits until the visibility store shows the notice marked (what a listing matches). */
async function markVisible(taskId: string): Promise<void> {
  const query = `WorkflowId = '${taskId}-notice' AND ${noticeSearchAttribute.name} = '${NOTICE_UNDELIVERED}'`;
  await expect.poll(async () => (await env.client.workflow.count(query)).count, { timeout: 10_000 }).toBe(1);
}

const ROW = /^(bash-[0-9a-f-]{36}) +(.+?) +(\d+[smhd]) +(.*)$/;
/** The listing's rows as [id, status, age, command]; the header checked. */
function rows(result: ToolResult): (string | undefined)[][] {
  const [header, ...lines] = text(result).split('\n');
  if (header === '(no background tasks)') return [];
  expect(header).toMatch(/^ID +STATUS +AGE +COMMAND$/);
  return lines.map((line) => ROW.exec(line)?.slice(1, 5) ?? [line]);
}

const age = expect.stringMatching(/^\d+[sm]$/);

describe('bash_list and notices that were not delivered', () => {
  it('marks an ended task whose notice expired, for its own session only, until bash_output shows its end', async () => {
    const tools = await agentHost();
    const a = session();
    const ended = await startBackground(tools.bash, 'echo done; exit 3', agent(a));
    // One after the other, so the listing's order (the latest to end first) is known.
    await env.client.workflow.getHandle(ended).result();
    const quiet = await startBackground(tools.bash, 'exit 0', agent(a));
    const running = await startBackground(tools.bash, 'sleep 60', agent(a));
    expect(await noticeOutcome(ended)).toBe('expired');
    expect(await noticeOutcome(quiet)).toBe('expired');

    // The expired notice's own run carries its task's owner and the mark, which the listing matches.
    const attributes = (await notice(ended).describe()).typedSearchAttributes;
    expect(attributes.get(ownerSearchAttribute)).toBe(`session:${a}`);
    expect(attributes.get(noticeSearchAttribute)).toBe('undelivered');

    const marked = (taskId: string, command: string) => [
      taskId,
      'completed (notice not delivered)',
      age,
      command,
    ];
    // The default listing (running tasks) shows them too: the session never heard of their end.
    await expect
      .poll(async () => rows(await tools.bash_list.execute({}, agent(a))), { timeout: 15_000 })
      .toEqual([
        [running, 'running', age, 'sleep 60'],
        marked(quiet, 'exit 0'),
        marked(ended, 'echo done; exit 3'),
      ]);
    expect(text(await tools.bash_list.execute({}, agent(a))).split('\n')[3]).toMatch(
      new RegExp(`^${ended}  completed \\(notice not delivered\\)  \\d+s +echo done; exit 3$`),
    );
    expect(rows(await tools.bash_list.execute({ all: true }, agent(a)))).toEqual([
      [running, 'running', age, 'sleep 60'],
      marked(quiet, 'exit 0'),
      marked(ended, 'echo done; exit 3'),
    ]);
    // Another session, or a caller with none, does not see them.
    expect(text(await tools.bash_list.execute({ all: true }, agent(session())))).toBe(
      '(no background tasks)',
    );
    expect(text(await tools.bash_list.execute({ all: true }, {}))).not.toContain(ended);

    // A read that shows the task's end clears its mark, output or none.
    expect(text(await tools.bash_output.execute({ task_id: ended }, agent(a)))).toBe(
      'done\n[status: completed, exit code: 3]',
    );
    await expect
      .poll(async () => rows(await tools.bash_list.execute({}, agent(a))), { timeout: 15_000 })
      .toEqual([[running, 'running', age, 'sleep 60'], marked(quiet, 'exit 0')]);
    expect(text(await tools.bash_output.execute({ task_id: quiet }, agent(a)))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );
    await expect
      .poll(async () => rows(await tools.bash_list.execute({}, agent(a))), { timeout: 15_000 })
      .toEqual([[running, 'running', age, 'sleep 60']]);
    expect(rows(await tools.bash_list.execute({ all: true }, agent(a)))).toEqual([
      [running, 'running', age, 'sleep 60'],
      [quiet, 'completed', age, 'exit 0'],
      [ended, 'completed', age, 'echo done; exit 3'],
    ]);
    expect(text(await tools.bash_kill.execute({ task_id: running }, agent(a)))).toBe(
      `killed background task ${running}`,
    );
  });

  it('shows a task an operator killed by its status, and none once its end was read before the window ran out', async () => {
    const tools = await agentHost();
    const a = session();
    const killed = await startBackground(tools.bash, 'sleep 60', agent(a));
    const read = await startBackground(tools.bash, 'echo early', agent(a));
    await env.client.workflow.getHandle(read).result();
    // Read as soon as it ended: the session knows, so the notice that expires after changes nothing.
    expect(text(await tools.bash_output.execute({ task_id: read }, agent(a)))).toBe(
      'early\n[status: completed, exit code: 0]',
    );
    // As `durable-bash kill --owner` kills it: the session's own bash_kill would send no notice.
    const operator = createBashKillTool(
      new BashTasks({ client: env.client, taskQueue: commandWorker.taskQueue }),
    );
    expect(text(await operator.execute({ task_id: killed }, agent(a)))).toBe(
      `killed background task ${killed}`,
    );
    expect(await noticeOutcome(read)).toBe('expired');
    expect(await noticeOutcome(killed)).toBe('expired');
    await markVisible(read);
    await markVisible(killed);

    await expect
      .poll(async () => rows(await tools.bash_list.execute({}, agent(a))), { timeout: 15_000 })
      .toEqual([[killed, 'killed (notice not delivered)', age, 'sleep 60']]);
    expect(rows(await tools.bash_list.execute({ all: true }, agent(a)))).toEqual([
      [killed, 'killed (notice not delivered)', age, 'sleep 60'],
      [read, 'completed', age, 'echo early'],
    ]);
  });

  it('marks nothing when the notice was delivered or the session is gone', async () => {
    const live = session();
    const gone = session();
    const tools = await agentHost({ inject: async (sessionId) => sessionId === live });
    const delivered = await startBackground(tools.bash, 'echo told', agent(live));
    const dropped = await startBackground(tools.bash, 'echo nobody', agent(gone));
    expect(await noticeOutcome(delivered)).toBe('delivered');
    expect(await noticeOutcome(dropped)).toBe('session-gone');
    for (const taskId of [delivered, dropped]) {
      const attributes = (await notice(taskId).describe()).typedSearchAttributes;
      expect(attributes.get(ownerSearchAttribute)).toBeUndefined();
      expect(attributes.get(noticeSearchAttribute)).toBeUndefined();
    }
    await expect
      .poll(async () => rows(await tools.bash_list.execute({ all: true }, agent(live))), { timeout: 15_000 })
      .toEqual([[delivered, 'completed', age, 'echo told']]);
    expect(text(await tools.bash_list.execute({}, agent(live)))).toBe('(no background tasks)');
    expect(text(await tools.bash_list.execute({}, agent(gone)))).toBe('(no background tasks)');
  });

  it('marks under encryption by the hashed owner, with no session id in what the server stores', async () => {
    const key: CodecKey = { id: 'key-a', secret: randomBytes(CODEC_KEY_BYTES) };
    const dataConverter = encryptingDataConverter(new CodecKeyring([key]));
    const taskQueue = `encrypted-${randomUUID()}`;
    const worker = await createBashWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      dataConverter,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      executor: { workdirRoots: TEST_WORKDIR_ROOTS },
    });
    const running = worker.run();
    try {
      const client = new Client({
        connection: env.connection,
        namespace: env.namespace ?? 'default',
        dataConverter,
      });
      const tools = await agentHost(undefined, client, taskQueue);
      const a = session();
      const taskId = await startBackground(tools.bash, 'echo secret', agent(a));
      expect(await noticeOutcome(taskId, client)).toBe('expired');
      const owner = (await notice(taskId, client).describe()).typedSearchAttributes.get(ownerSearchAttribute);
      const task = await client.workflow.getHandle(taskId).describe();
      expect(owner).toBe(task.typedSearchAttributes.get(ownerSearchAttribute));
      expect(owner).not.toContain(a);
      await expect
        .poll(async () => rows(await tools.bash_list.execute({}, agent(a))), { timeout: 15_000 })
        .toEqual([[taskId, 'completed (notice not delivered)', age, 'echo secret']]);
      expect(text(await tools.bash_output.execute({ task_id: taskId }, agent(a)))).toBe(
        'secret\n[status: completed, exit code: 0]',
      );
      await expect
        .poll(async () => text(await tools.bash_list.execute({}, agent(a))), { timeout: 15_000 })
        .toBe('(no background tasks)');
    } finally {
      worker.shutdown();
      await running;
    }
  });
});
