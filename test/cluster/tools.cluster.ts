/**
 * The tool contract on a production-shaped cluster (PostgreSQL persistence and SQL visibility,
 * four Temporal services): background tasks, their output, kill and listing, the ownership
 * fence under hostile session ids, whose listings are PostgreSQL visibility queries, and the mark
 * a listing gives a task whose completion notice was not delivered.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBashTools, type ToolResult } from '../../src/index.js';
import { startBackground } from '../helpers/background-task.js';
import { agent, type Tools, text, toolsByName } from '../helpers/tool-calls.js';
import { useCluster } from './use-cluster.js';

const suite = useCluster();
let tools: Tools;

describe('on a cluster: background tasks', () => {
  it('start, show output then [status: running], complete, and list', async () => {
    await suite.startHost();
    tools = suite.tools();
    const session = agent('cluster-contract');

    // A foreground run, as the model sees it.
    expect(
      text(
        await tools.bash.execute(
          { command: 'echo hi; echo err >&2; exit 3', description: 'Foreground' },
          session,
        ),
      ),
    ).toBe('hi\n[stderr]\nerr\n[exit code: 3]');

    const taskId = await startBackground(tools.bash, 'echo first; sleep 2; echo second', session);
    await expect
      .poll(async () => text(await tools.bash_output.execute({ task_id: taskId }, session)), {
        timeout: 10_000,
      })
      .toBe('first\n[status: running]');
    await suite.env.client.workflow.getHandle(taskId).result();
    expect(text(await tools.bash_output.execute({ task_id: taskId }, session))).toBe(
      'second\n[status: completed, exit code: 0]',
    );
    expect(text(await tools.bash_output.execute({ task_id: taskId }, session))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );

    const sleeper = await startBackground(tools.bash, 'echo up; sleep 120', session);
    await expect
      .poll(async () => rows(await tools.bash_list.execute({}, session)), { timeout: 15_000 })
      .toEqual([[sleeper, 'running', 'echo up; sleep 120']]);
    await expect
      .poll(async () => rows(await tools.bash_list.execute({ all: true }, session)), { timeout: 15_000 })
      .toEqual([
        [sleeper, 'running', 'echo up; sleep 120'],
        [taskId, 'completed', 'echo first; sleep 2; echo second'],
      ]);

    // Its first line read before the kill: a kill under load may otherwise come before bash ran echo.
    expect(text(await tools.bash_output.execute({ task_id: sleeper, wait_ms: 15_000 }, session))).toBe(
      'up\n[status: running]',
    );
    expect(await tools.bash_kill.execute({ task_id: sleeper }, session)).toEqual({
      content: [{ type: 'text', text: `killed background task ${sleeper}` }],
    });
    expect(text(await tools.bash_output.execute({ task_id: sleeper }, session))).toBe(
      '(no new output)\n[status: killed by SIGTERM]',
    );
    expect(await tools.bash_kill.execute({ task_id: sleeper }, session)).toEqual({
      content: [{ type: 'text', text: `task ${sleeper} had already finished` }],
    });
    await expect
      .poll(async () => text(await tools.bash_list.execute({}, session)), { timeout: 15_000 })
      .toBe('(no background tasks)');
  });
});

/** Session ids that break fences built on quoting: the listing is a PostgreSQL visibility query. */
const hostileSessions = [
  "a' OR 1=1 --",
  "x\\' OR BashTaskOwner != '",
  '\\',
  '"double"',
  "it's",
  '%',
  'ü€😀',
  ' ',
  'plain',
];

describe('on a cluster: the server', () => {
  it('serves Prometheus metrics, which count the starts above', async () => {
    const metrics = await (await fetch(suite.cluster.metricsUrl)).text();
    expect(metrics).toMatch(/operation="StartWorkflowExecution"/);
  });
});

describe('on a cluster: the ownership fence', () => {
  it('lets each hostile session see and touch only its own tasks', async () => {
    tools = suite.tools();
    const started = new Map<string, string>();
    for (const session of hostileSessions) {
      started.set(
        session,
        await startBackground(tools.bash, `echo owner-${started.size}; sleep 120`, agent(session)),
      );
    }
    const mine = (session: string) => started.get(session) as string;

    for (const session of hostileSessions) {
      await expect
        .poll(async () => rows(await tools.bash_list.execute({ all: true }, agent(session))), {
          timeout: 15_000,
        })
        .toEqual([[mine(session), 'running', expect.stringMatching(/^echo owner-\d+; sleep 120$/)]]);
    }
    // A caller with no agent session sees no session's tasks.
    const unowned = text(await tools.bash_list.execute({ all: true }, {}));
    for (const taskId of started.values()) expect(unowned).not.toContain(taskId);

    for (const [index, session] of hostileSessions.entries()) {
      const other = hostileSessions[(index + 1) % hostileSessions.length] as string;
      const foreign = {
        content: [{ type: 'text', text: `task ${mine(other)} belongs to another session` }],
        isError: true,
      };
      expect(await tools.bash_output.execute({ task_id: mine(other) }, agent(session))).toEqual(foreign);
      expect(await tools.bash_kill.execute({ task_id: mine(other) }, agent(session))).toEqual(foreign);
      expect(await tools.bash_output.execute({ task_id: mine(other) }, {})).toEqual(foreign);
    }
    // Nothing the refused calls did moved a read position or ended a task.
    for (const [index, session] of hostileSessions.entries()) {
      await expect
        .poll(async () => text(await tools.bash_output.execute({ task_id: mine(session) }, agent(session))), {
          timeout: 10_000,
        })
        .toBe(`owner-${index}\n[status: running]`);
      expect(await tools.bash_kill.execute({ task_id: mine(session) }, agent(session))).toEqual({
        content: [{ type: 'text', text: `killed background task ${mine(session)}` }],
      });
    }
    // The ended tasks' status reaches visibility, still fenced by owner.
    for (const session of hostileSessions) {
      await expect
        .poll(async () => rows(await tools.bash_list.execute({ all: true }, agent(session))), {
          timeout: 15_000,
        })
        .toEqual([[mine(session), 'killed', expect.any(String)]]);
      expect(text(await tools.bash_list.execute({}, agent(session)))).toBe('(no background tasks)');
    }
  });
});

describe('on a cluster: a notice that was not delivered', () => {
  it('marks its ended task in the session listing (PostgreSQL visibility) until a read shows the end', async () => {
    await suite.startHost();
    // An agent host whose worker never comes: each notice's window runs out.
    const away = toolsByName(
      createBashTools({
        client: suite.env.client,
        taskQueue: suite.taskQueue,
        agentTaskQueue: `away-${randomUUID()}`,
        noticeWindowMs: 2_000,
      }),
    );
    const session = agent("away' OR 1=1 --");
    const taskId = await startBackground(away.bash, 'echo unheard; exit 2', session);
    // Its notice starts as the task ends.
    await suite.env.client.workflow.getHandle(taskId).result();
    expect(await suite.env.client.workflow.getHandle(`${taskId}-notice`).result()).toBe('expired');

    await expect
      .poll(async () => rows(await away.bash_list.execute({}, session)), { timeout: 15_000 })
      .toEqual([[taskId, 'completed (notice not delivered)', 'echo unheard; exit 2']]);
    expect(text(await away.bash_list.execute({ all: true }, agent('away')))).toBe('(no background tasks)');
    expect(text(await away.bash_output.execute({ task_id: taskId }, session))).toBe(
      'unheard\n[status: completed, exit code: 2]',
    );
    await expect
      .poll(async () => text(await away.bash_list.execute({}, session)), { timeout: 15_000 })
      .toBe('(no background tasks)');
    expect(rows(await away.bash_list.execute({ all: true }, session))).toEqual([
      [taskId, 'completed', 'echo unheard; exit 2'],
    ]);
  });
});

const ROW = /^(bash-[0-9a-f-]{36}) +(.+?) +\d+[smhd] +(.*)$/;

/** A bash_list table's rows: id, status, command (the age varies). */
function rows(result: ToolResult): (string | undefined)[][] {
  const lines = text(result).split('\n');
  if (lines[0] === '(no background tasks)') return [];
  expect(lines[0]).toMatch(/^ID +STATUS +AGE +COMMAND$/);
  return lines.slice(1).map((line) => ROW.exec(line)?.slice(1, 4) ?? [line]);
}
