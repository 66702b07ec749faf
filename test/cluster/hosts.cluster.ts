/**
 * Two worker hosts on one task queue of a production-shaped cluster: `durable-bash worker`
 * processes with distinct host ids. Tasks land on both; each is read and killed through its own
 * host's queue, whichever host the caller's tools know nothing about.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startBackground } from '../helpers/background-task.js';
import { processesMatching } from '../helpers/processes.js';
import { agent, text } from '../helpers/tool-calls.js';
import { useCluster } from './use-cluster.js';

const suite = useCluster();

describe('on a cluster: two worker hosts', () => {
  it('run tasks on both, and each task is readable and killable', async () => {
    const hosts = [await suite.startHost(), await suite.startHost()];
    const tools = suite.tools();
    const session = agent('cluster-hosts');
    const hostOf = (taskId: string) =>
      hosts.findIndex((host) => readdirSync(host.spillDir).includes(`${taskId}.state`));

    // Each task sleeps for its own odd number of seconds, so its process can be told apart.
    const base = 50_000 + Math.floor(Math.random() * 10_000) * 100;
    const sleeping = (index: number) => processesMatching(new RegExp(`^sleep ${base + index}$`)).length;

    // Start until both hosts have running tasks (the queue hands each start to either worker).
    const tasks: { taskId: string; index: number; host: number }[] = [];
    for (let index = 0; index < 40 && new Set(tasks.map((task) => task.host)).size < 2; index++) {
      const taskId = await startBackground(tools.bash, `echo task-${index}; sleep ${base + index}`, session);
      await expect.poll(() => hostOf(taskId), { timeout: 10_000 }).toBeGreaterThanOrEqual(0);
      tasks.push({ taskId, index, host: hostOf(taskId) });
    }
    expect(new Set(tasks.map((task) => task.host))).toEqual(new Set([0, 1]));

    for (const { taskId, index } of tasks) {
      await expect
        .poll(async () => text(await tools.bash_output.execute({ task_id: taskId }, session)), {
          timeout: 10_000,
        })
        .toBe(`task-${index}\n[status: running]`);
    }

    // A host's worker dies: its task keeps running, a read says the host is not answering (and
    // moves nothing); its worker comes back with the same host id and the task is reachable again.
    const onSecond = tasks.find((task) => task.host === 1) as (typeof tasks)[number];
    await hosts[1]?.worker.crash();
    const whileDown = text(await tools.bash_output.execute({ task_id: onSecond.taskId }, session));
    expect(whileDown).toContain('[task worker unavailable');
    await suite.restartHost(hosts[1] as (typeof hosts)[number]);
    await expect
      .poll(async () => text(await tools.bash_output.execute({ task_id: onSecond.taskId }, session)), {
        timeout: 30_000,
      })
      .toBe('(no new output)\n[status: running]');

    for (const { taskId, index } of tasks) {
      expect(sleeping(index)).toBe(1);
      expect(await tools.bash_kill.execute({ task_id: taskId }, session)).toEqual({
        content: [{ type: 'text', text: `killed background task ${taskId}` }],
      });
      expect(text(await tools.bash_output.execute({ task_id: taskId }, session))).toBe(
        '(no new output)\n[status: killed by SIGTERM]',
      );
      expect(sleeping(index)).toBe(0);
    }
    console.log(
      `tasks per host: ${hosts.map((_, host) => tasks.filter((task) => task.host === host).length).join(' / ')}`,
    );
  });
});
