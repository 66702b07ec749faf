import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { taskListQuery } from '../../src/client/task-list.js';
import type { AgentSessions } from '../../src/shared/notice.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../../src/shared/search-attributes.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { createBashKillTool } from '../../src/tools/bash-kill.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { noticeOf, noticeOutcome as outcomeOfNotice } from '../helpers/notices.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text } from '../helpers/tool-calls.js';

let env: TestWorkflowEnvironment;
let commandWorker: RunningWorker;
let hostDown: RunningWorker;
const agentWorkers: RunningWorker[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
  commandWorker = await startBashWorker(env);
  // Routes its commands to a task queue no worker serves: a command host that is down.
  hostDown = await startBashWorker(env, { commandTaskQueue: `down-${randomUUID()}` });
});

afterEach(async () => {
  await Promise.all(agentWorkers.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  await Promise.all([commandWorker?.stop(), hostDown?.stop()]);
  await env?.teardown();
});

interface Injection {
  sessionId: string;
  content: string;
  options: { source: { kind: 'plugin'; plugin: string }; noticeId: string };
}

/** The harness's sessions, in memory: records every inject; `failures` makes the first calls throw. */
class FakeSessions implements AgentSessions {
  readonly injections: Injection[] = [];

  constructor(
    private readonly live: ReadonlySet<string>,
    private failures = 0,
  ) {}

  async inject(sessionId: string, content: string, options: Injection['options']): Promise<boolean> {
    this.injections.push({ sessionId, content, options });
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('agent host is restarting');
    }
    return this.live.has(sessionId);
  }
}

/** One agent host: its own task queue, the tools it hands the model, and (when started) its worker. */
function agentHost({
  noticeWindowMs,
  commands = commandWorker,
}: {
  noticeWindowMs?: number;
  commands?: RunningWorker;
} = {}) {
  const taskQueue = `agent-${randomUUID()}`;
  const tools = createBashTools({
    client: env.client,
    taskQueue: commands.taskQueue,
    agentTaskQueue: taskQueue,
    ...(noticeWindowMs !== undefined ? { noticeWindowMs } : {}),
  });
  return {
    bash: tools.find((tool) => tool.name === 'bash') as Tool,
    bashOutput: tools.find((tool) => tool.name === 'bash_output') as Tool,
    bashKill: tools.find((tool) => tool.name === 'bash_kill') as Tool,
    async startWorker(agents: AgentSessions): Promise<void> {
      agentWorkers.push(await startAgentWorker(env, { taskQueue, agents }));
    },
  };
}

/** `bash_kill` as `durable-bash kill --owner <session>` runs it: an operator's, not the session's own call. */
const operatorKill = (commands: RunningWorker) =>
  createBashKillTool(new BashTasks({ client: env.client, taskQueue: commands.taskQueue }));

const source = { kind: 'plugin', plugin: 'tool-bash' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the task's workflow to close, however it ended. */
async function taskEnd(taskId: string): Promise<void> {
  await env.client.workflow
    .getHandle(taskId)
    .result()
    .catch(() => undefined);
}

const notice = (taskId: string) => noticeOf(env.client, taskId);

const noticeOutcome = (taskId: string) => outcomeOfNotice(env.client, taskId);

/** Reads the task with bash_output (waiting up to 10 s each time) until what it read matches `until`. */
async function readUntil(
  bashOutput: Tool,
  taskId: string,
  exec: ToolExecContext,
  until: RegExp,
): Promise<string> {
  let read = '';
  for (let attempt = 0; attempt < 20 && !until.test(read); attempt += 1)
    read += text(await bashOutput.execute({ task_id: taskId, wait_ms: 10_000 }, exec));
  return read;
}

/** The session's tasks, from the owner search attribute; waits for visibility to catch up. */
async function tasksOwnedBy(sessionId: string): Promise<string[]> {
  const query = taskListQuery({ owner: sessionId });
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const ids: string[] = [];
    for await (const workflow of env.client.workflow.list({ query })) ids.push(workflow.workflowId);
    if (ids.length > 0) return ids;
    await sleep(100);
  }
  throw new Error(`no task owned by ${sessionId} became visible`);
}

async function taskStatus(taskId: string) {
  const description = await env.client.workflow.getHandle(taskId).describe();
  return {
    workflow: description.status.name,
    status: description.typedSearchAttributes.get(statusSearchAttribute),
  };
}

describe('completion notice', () => {
  it('delivers one notice to the owning session, not another, when a background task exits', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a', 'session-b']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'echo out; exit 3', agent('session-a'));

    expect((await env.client.workflow.getHandle(taskId).result()).exitCode).toBe(3);
    expect(await notice(taskId).result()).toBe('delivered');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'session-a',
        content: `background bash task ${taskId} finished [status: completed, exit code: 3]. Read its output with bash_output.\n[output]\nout`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'COMPLETED', status: 'completed' });
    // The notice is no task: a session's task listing (a query on the owner) does not show it.
    const description = await notice(taskId).describe();
    expect(description.typedSearchAttributes.get(ownerSearchAttribute)).toBeUndefined();
    expect(description.typedSearchAttributes.get(statusSearchAttribute)).toBeUndefined();
  });

  it('says in one line that bash_output already read all of the output, in place of repeating it', async () => {
    // Issue 28: the session read n1, n2 and n3; the notice repeated them.
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'echo n1; echo n2; echo n3; sleep 2', agent('session-a'));
    expect(await readUntil(host.bashOutput, taskId, agent('session-a'), /n3/)).toMatch(/^n1\nn2\nn3\n/);
    await taskEnd(taskId);

    expect(await noticeOutcome(taskId)).toBe('delivered');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'session-a',
        content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output: all of it was already read]`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
    // The notice moved no read position: the next read shows the end, and nothing again.
    expect(text(await host.bashOutput.execute({ task_id: taskId }, agent('session-a')))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );
  });

  it('carries only the output that no read has shown', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(
      host.bash,
      'echo n1; echo n2; echo n3; sleep 2; echo n4; echo oops >&2; exit 1',
      agent('session-a'),
    );
    expect(await readUntil(host.bashOutput, taskId, agent('session-a'), /n3/)).toMatch(/^n1\nn2\nn3\n/);
    await taskEnd(taskId);

    expect(await noticeOutcome(taskId)).toBe('delivered');
    expect(sessions.injections.map((injection) => injection.content)).toEqual([
      `background bash task ${taskId} finished [status: completed, exit code: 1]. Read its output with bash_output.\n[output since the last read]\nn4\n[stderr]\noops`,
    ]);
  });

  it('never carries a line that a read in flight when the task ended returned', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'echo first; sleep 1; echo last', agent('session-a'));
    expect(await readUntil(host.bashOutput, taskId, agent('session-a'), /first/)).toMatch(/^first\n/);
    // Waiting on the host when the command prints its last line and ends.
    const read = await readUntil(host.bashOutput, taskId, agent('session-a'), /last/);
    await taskEnd(taskId);

    expect(await noticeOutcome(taskId)).toBe('delivered');
    const notices = sessions.injections.map((injection) => injection.content);
    expect(read).toMatch(/^last\n/);
    expect(notices).toEqual([
      `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output: all of it was already read]`,
    ]);
  });

  it('sends none for a task its own session killed with bash_kill: the answer says it ended', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const marker = Math.floor(Math.random() * 1000) + 7000;
    const taskId = await startBackground(host.bash, `sleep ${marker}`, agent('session-a'));
    await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 1);

    expect(text(await host.bashKill.execute({ task_id: taskId }, agent('session-a')))).toBe(
      `killed background task ${taskId}`,
    );
    expect((await env.client.workflow.getHandle(taskId).result()).signal).toBe('SIGTERM');
    // A notice starts before its task closes: a closed task without one never gets one.
    await expect(notice(taskId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(sessions.injections).toEqual([]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'COMPLETED', status: 'killed' });
    // Its run took the patched path (the signal, the marker, no child); it replays as it ran.
    const handle = env.client.workflow.getHandle(taskId);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') } },
      await handle.fetchHistory(),
      taskId,
    );
  });

  it('reports a task an operator killed (durable-bash kill) by the signal its result records', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const marker = Math.floor(Math.random() * 1000) + 8000;
    const taskId = await startBackground(host.bash, `sleep ${marker}`, agent('session-a'));
    await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 1);

    expect(text(await operatorKill(commandWorker).execute({ task_id: taskId }, agent('session-a')))).toBe(
      `killed background task ${taskId}`,
    );
    expect((await env.client.workflow.getHandle(taskId).result()).signal).toBe('SIGTERM');
    expect(await notice(taskId).result()).toBe('delivered');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'session-a',
        content: `background bash task ${taskId} finished [status: killed by SIGTERM]. Read its output with bash_output.\n(no output)`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'COMPLETED', status: 'killed' });
  });

  it('reports a task whose command could not start, and the task still fails as before', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'true', agent('session-a'), {
      description: 'Nowhere',
      workdir: '/nonexistent-dir',
    });
    await taskEnd(taskId);

    expect(await notice(taskId).result()).toBe('delivered');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'session-a',
        content: `background bash task ${taskId} finished [status: failed: workdir does not exist or is not a directory: /nonexistent-dir]. Read its output with bash_output.`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'FAILED', status: 'failed' });
  });

  it('reports a task an operator killed before any worker took its command as killed, not failed', async () => {
    const host = agentHost({ commands: hostDown });
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'sleep 60', agent('session-a'));

    expect(text(await operatorKill(hostDown).execute({ task_id: taskId }, agent('session-a')))).toBe(
      `killed background task ${taskId}`,
    );
    expect(await notice(taskId).result()).toBe('delivered');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'session-a',
        content: `background bash task ${taskId} finished [status: killed before the command started]. Read its output with bash_output.`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'CANCELLED', status: 'killed' });
  });

  it('sends none for a task its own session killed before any worker took its command', async () => {
    const host = agentHost({ commands: hostDown });
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'sleep 60', agent('session-a'));

    expect(text(await host.bashKill.execute({ task_id: taskId }, agent('session-a')))).toBe(
      `killed background task ${taskId}`,
    );
    await taskEnd(taskId);
    await expect(notice(taskId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(sessions.injections).toEqual([]);
    expect(text(await host.bashOutput.execute({ task_id: taskId }, agent('session-a')))).toBe(
      '(no new output)\n[status: killed before the command started]',
    );
    expect(await taskStatus(taskId)).toEqual({ workflow: 'CANCELLED', status: 'killed' });
  });

  it("still sends the notice of a task whose session's kill was pending: its answer did not say it ended", async () => {
    // No worker serves the task's queue yet: the workflow task that carries the kill waits.
    const commands = { taskQueue: `later-${randomUUID()}` } as RunningWorker;
    const host = agentHost({ commands });
    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'sleep 60', agent('session-a'));

    expect(text(await host.bashKill.execute({ task_id: taskId }, agent('session-a')))).toBe(
      `kill of background task ${taskId} is pending: no worker on its host is answering; it takes effect as soon as one is back`,
    );
    agentWorkers.push(await startBashWorker(env, {}, commands.taskQueue));
    expect(await noticeOutcome(taskId)).toBe('delivered');
    expect(sessions.injections.map((injection) => injection.content)).toEqual([
      `background bash task ${taskId} finished [status: killed before the command started]. Read its output with bash_output.`,
    ]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'CANCELLED', status: 'killed' });
    // Killed in its first workflow task, both signals taken first: it replays as it ran.
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') } },
      await env.client.workflow.getHandle(taskId).fetchHistory(),
      taskId,
    );
  });

  it('sends none for a foreground run or a background task with no owner', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-fg']));
    await host.startWorker(sessions);
    const session = `session-fg-${randomUUID()}`;

    const foreground = await host.bash.execute({ command: 'echo hi', description: 'Say hi' }, agent(session));
    expect(text(foreground)).toBe('hi\n');
    const unowned = await startBackground(host.bash, 'echo unowned');
    await taskEnd(unowned);

    // The foreground run's id is not in its result; the owner attribute finds it.
    const owned = await tasksOwnedBy(session);
    expect(owned).toHaveLength(1);
    // A notice starts before its task closes, so a closed task without one never gets one.
    for (const taskId of [...owned, unowned]) {
      await expect(notice(taskId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
    expect(sessions.injections).toEqual([]);
  });

  it('holds the notice while no agent worker runs, and delivers it once one starts', async () => {
    const host = agentHost();
    const taskId = await startBackground(host.bash, 'exit 0', agent('session-a'));
    await taskEnd(taskId);
    // The task closed with its result while its notice waits.
    expect(await taskStatus(taskId)).toEqual({ workflow: 'COMPLETED', status: 'completed' });
    await sleep(3_000);
    expect((await notice(taskId).describe()).status.name).toBe('RUNNING');

    const sessions = new FakeSessions(new Set(['session-a']));
    await host.startWorker(sessions);
    expect(await notice(taskId).result()).toBe('delivered');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'session-a',
        content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n(no output)`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
  });

  it('retries an inject that failed and delivers the notice once', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set(['session-a']), 1);
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'exit 0', agent('session-a'));
    await taskEnd(taskId);

    expect(await notice(taskId).result()).toBe('delivered');
    const expected = {
      sessionId: 'session-a',
      content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n(no output)`,
      options: { source, noticeId: `${taskId}-notice` },
    };
    // The first call threw (not delivered), the retry delivered.
    expect(sessions.injections).toEqual([expected, expected]);
  });

  it('drops the notice quietly when the session is gone', async () => {
    const host = agentHost();
    const sessions = new FakeSessions(new Set());
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'exit 0', agent('disposed'));
    await taskEnd(taskId);

    expect(await notice(taskId).result()).toBe('session-gone');
    expect((await notice(taskId).describe()).status.name).toBe('COMPLETED');
    expect(sessions.injections).toEqual([
      {
        sessionId: 'disposed',
        content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n(no output)`,
        options: { source, noticeId: `${taskId}-notice` },
      },
    ]);
    expect(await taskStatus(taskId)).toEqual({ workflow: 'COMPLETED', status: 'completed' });
  });

  it('drops the notice quietly when no agent worker comes within the window', async () => {
    const host = agentHost({ noticeWindowMs: 3_000 });
    const taskId = await startBackground(host.bash, 'exit 0', agent('session-a'));
    await taskEnd(taskId);

    expect(await notice(taskId).result()).toBe('expired');
    expect((await notice(taskId).describe()).status.name).toBe('COMPLETED');
    expect(await taskStatus(taskId)).toEqual({ workflow: 'COMPLETED', status: 'completed' });
  });

  it('stops retrying an inject that keeps failing when the window runs out', async () => {
    const host = agentHost({ noticeWindowMs: 5_000 });
    const sessions = new FakeSessions(new Set(['session-a']), Number.POSITIVE_INFINITY);
    await host.startWorker(sessions);
    const taskId = await startBackground(host.bash, 'exit 0', agent('session-a'));
    await taskEnd(taskId);

    expect(await notice(taskId).result()).toBe('expired');
    // Attempts at 0 s, 1 s and 3 s; the next (7 s) would start after the window.
    expect(sessions.injections).toHaveLength(3);
  });
});
