import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { quoteQueryValue, taskListQuery } from '../../src/client/task-list.js';
import { CodecKeyring } from '../../src/codec/keyring.js';
import { OwnerHasher } from '../../src/codec/owner-hash.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';

const suite = useDevServerWithWorker();
let tasks: BashTasks;

beforeAll(async () => {
  tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
});

const start = (command: string, owner?: string) =>
  tasks.start({
    command,
    description: 'List me',
    background: true,
    ...(owner !== undefined ? { owner } : {}),
  });

const ids = async (filter: Parameters<BashTasks['list']>[0]) =>
  (await tasks.list(filter)).map((task) => task.taskId);

describe('BashTasks.list', () => {
  it('lists one session’s tasks, and treats an owner full of query syntax as plain data', async () => {
    const injection = "a' OR BashTaskOwner != '";
    const slashy = 'x\\" OR 1=1 -- ü';
    const victim = await start('echo victim', 'victim');
    const attacker = await start('echo attacker', injection);
    const slashed = await start('echo slashed', slashy);
    const unowned = await start('echo unowned');
    await expect
      .poll(() => ids({ all: true }), { timeout: 10_000 })
      .toEqual(expect.arrayContaining([victim, attacker, slashed, unowned]));
    expect(await ids({ owner: injection })).toEqual([attacker]);
    expect(await ids({ owner: slashy })).toEqual([slashed]);
    expect(await ids({ owner: 'victim' })).toEqual([victim]);
    expect(await ids({ owner: 'nobody' })).toEqual([]);
  });

  it('gives each task its status, command, description, owner and times, newest first', async () => {
    const first = await start('echo one', 'lister');
    await suite.env.client.workflow.getHandle(first).result();
    const second = await start('sleep 30', 'lister');
    await expect
      .poll(async () => (await tasks.list({ owner: 'lister' })).map((task) => [task.taskId, task.status]), {
        timeout: 10_000,
      })
      .toEqual([
        [second, 'running'],
        [first, 'completed'],
      ]);
    const [running, done] = await tasks.list({ owner: 'lister' });
    expect(running).toMatchObject({
      command: 'sleep 30',
      description: 'List me',
      owner: 'lister',
      closedAt: undefined,
    });
    expect(done?.closedAt).toBeInstanceOf(Date);
    expect(running?.startedAt.getTime()).toBeGreaterThanOrEqual(done?.startedAt.getTime() ?? 0);
    await tasks.kill(second, 'lister');
  });
});

describe('taskListQuery', () => {
  it('quotes values, escaping backslashes and quotes, with owners percent-encoded', () => {
    expect(quoteQueryValue("it's a \\ test")).toBe("'it\\'s a \\\\ test'");
    expect(taskListQuery({ owner: "a'b \\c" })).toBe(
      "WorkflowType = 'bashTask' AND BashTaskOwner = 'session:a%27b%20%5Cc'",
    );
    expect(taskListQuery({ all: true })).toBe("WorkflowType = 'bashTask'");
  });

  it("asks for a session's undelivered notices in the same query, under the same owner", () => {
    expect(taskListQuery({ owner: "a'b", running: true, undeliveredNotices: true })).toBe(
      "((WorkflowType = 'bashTask' AND ExecutionStatus = 'Running') OR " +
        "(WorkflowType IN ('completionNotice', 'monitorNotices') AND BashTaskNotice = 'undelivered')) AND BashTaskOwner = 'session:a%27b'",
    );
    const hasher = new OwnerHasher(new CodecKeyring([{ id: 'key-a', secret: Buffer.alloc(32, 7) }]));
    const [hash] = hasher.allHashes('session:s');
    expect(taskListQuery({ owner: 's', undeliveredNotices: true }, hasher)).toBe(
      "((WorkflowType = 'bashTask') OR (WorkflowType IN ('completionNotice', 'monitorNotices') AND BashTaskNotice = 'undelivered'))" +
        ` AND BashTaskOwner IN ('${hash}')`,
    );
  });
});
