/**
 * `durable-bash/dsh` loaded into a real harness context, composed from the harness's own
 * published packages the way its app composes them (Cordis root context; the llm, sessions,
 * agents, systemPrompt and tools services; the concrete agent loop), against a real dev server
 * and command worker.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context, Fiber } from '@deepseek-ai/cordis';
import type { Agent } from '@deepseek-ai/dsh-agent';
import { CallId } from '@deepseek-ai/dsh-llm';
import { SessionId, type UserMessage } from '@deepseek-ai/dsh-session';
import type { ToolExecutionResult } from '@deepseek-ai/dsh-tools';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropRepeatedNotices } from '../../src/agent-host/repeated-notices.js';
import { Approvals } from '../../src/client/approvals.js';
import { BashTasks } from '../../src/client/bash-tasks.js';
import durableBash, { type ConfigInput, createHarnessSessions } from '../../src/dsh/index.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import type { completionNotice } from '../../src/workflows/completion-notice.js';
import { startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { createHarness } from '../helpers/dsh-harness.js';
import { processesMatching, waitFor } from '../helpers/processes.js';

const suite = useDevServerWithWorker();
let app: Context;
let plugin: Fiber;
let agentTaskQueue: string;
let workspace: string;
const harness: Fiber[] = [];

function pluginConfig(): ConfigInput {
  return {
    address: suite.env.address,
    namespace: suite.env.namespace ?? 'default',
    taskQueue: suite.worker.taskQueue,
    agentTaskQueue,
  };
}

async function loadPlugin(config: ConfigInput = pluginConfig()): Promise<Fiber> {
  const fiber = app.plugin(durableBash as never, config as never);
  await fiber.await();
  return fiber;
}

/** A live agent of the harness's own loop, with its session's cwd. */
function createAgent(cwd = workspace): Agent {
  const id = SessionId(`session-${randomUUID()}`);
  const agent = app.agentLoop.create(id, undefined, { cwd });
  return agent;
}

/** One tool call through the harness's tool registry, as the agent loop makes it. */
function call(name: string, args: unknown, agent?: Agent, signal = new AbortController().signal) {
  return app.tools.execute({
    callId: CallId(randomUUID()),
    name,
    arguments: args,
    signal,
    ...(agent ? { agent } : {}),
  });
}

const text = (result: ToolExecutionResult) =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

const userText = (message: UserMessage) =>
  message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/** A background start through the harness's registry; the task's id. */
async function startThroughHarness(agent: Agent, command: string): Promise<string> {
  const result = await call(
    'bash',
    { command, description: 'Run in background', run_in_background: true },
    agent,
  );
  return startedTaskId(text(result));
}

/** A completion notice's exact text: its first line, then the output the task ended with. */
const noticeText = (taskId: string, status: string, output: string) =>
  `background bash task ${taskId} finished ${status}. Read its output with bash_output.\n${output}`;

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-dsh-')));
  agentTaskQueue = `agent-${randomUUID()}`;
  app = await createHarness(harness);
  plugin = await loadPlugin();
});

afterAll(async () => {
  await plugin?.dispose();
  for (const fiber of harness.reverse()) await fiber.dispose();
});

describe('durable-bash/dsh', () => {
  it('registers every tool as a harness tool definition with its schema, output and presentation', () => {
    const names = app.tools.schemas().map((schema) => schema.name);
    expect(names).toEqual(expect.arrayContaining(['bash', 'bash_output', 'bash_kill']));
    const bash = app.tools.get('bash');
    expect(bash?.parameters).toMatchObject({
      type: 'object',
      properties: { command: { type: 'string' }, description: { type: 'string' } },
      required: ['command', 'description'],
    });
    expect(bash?.output.schema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    expect(bash?.presentCall?.({ command: 'ls -la src', description: 'List sources' })).toEqual({
      card: 'terminal',
      title: 'ls -la src',
      description: 'List sources',
    });
  });

  it("fails to load beside another bash tool with the registry's own error, and leaves its tools out", async () => {
    const before = app.tools.schemas().length;
    const error = await durableBash.apply(app as never, pluginConfig() as never).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(error)).toMatch(/^Error: tool "bash" is already registered/);
    // Its partial registrations were undone; the loaded plugin's tools still answer.
    expect(app.tools.schemas().length).toBe(before);
    expect(text(await call('bash', { command: 'echo still', description: 'Print' }, createAgent()))).toBe(
      'still\n',
    );
  });

  it('runs a foreground call through the registry and returns the exact text', async () => {
    const agent = createAgent();
    const args = { command: 'echo hi; echo err >&2; exit 3', description: 'Print and fail' };
    const result = await call('bash', args, agent);
    expect(result).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: 'hi\n[stderr]\nerr\n[exit code: 3]' }],
    });
    expect(
      app.tools.get('bash')?.presentResult?.(args, { content: result.content, isError: result.isError }),
    ).toEqual({
      card: 'terminal',
      output: 'hi\n[stderr]\nerr',
      exitCode: 3,
    });
  });

  it('runs in the calling session’s cwd when the model gives no workdir', async () => {
    const agent = createAgent();
    expect(text(await call('bash', { command: 'pwd', description: 'Print the directory' }, agent))).toBe(
      `${workspace}\n`,
    );
    expect(text(await call('bash', { command: 'pwd', description: 'Relative', workdir: '.' }, agent))).toBe(
      `${workspace}\n`,
    );
  });

  it('reports a bad argument as an error result with the tool’s one-line message', async () => {
    const result = await call('bash', { command: '  ', description: 'Nothing' }, createAgent());
    expect(result.isError).toBe(true);
    // The harness renders a thrown tool error as `Error: <message>`, as it does for its own tool-bash.
    expect(text(result)).toMatch(/^Error: invalid command: /);
  });

  it('runs a background task, reads it with bash_output and lands its notice in the owning agent’s session', async () => {
    const agent = createAgent();
    const other = createAgent();
    const taskId = await startThroughHarness(agent, 'echo first; echo oops >&2; exit 3');
    await suite.env.client.workflow.getHandle(taskId).result();

    const read = await call('bash_output', { task_id: taskId }, agent);
    expect(text(read)).toBe('first\n[stderr]\noops\n[status: completed, exit code: 3]');
    const foreign = await call('bash_output', { task_id: taskId }, other);
    expect(foreign.isError).toBe(true);
    expect(text(foreign)).toBe(`Error: task ${taskId} belongs to another session`);

    const notice = suite.env.client.workflow.getHandle<typeof completionNotice>(`${taskId}-notice`);
    expect(await notice.result()).toBe('delivered');
    const landed = agent.inbox.nextStep.filter((message) => message.source.kind === 'plugin');
    expect(
      landed.map((message) => ({ text: userText(message), source: message.source, role: message.role })),
    ).toEqual([
      {
        text: noticeText(taskId, '[status: completed, exit code: 3]', '[output]\nfirst\n[stderr]\noops'),
        source: { kind: 'plugin', plugin: 'tool-bash' },
        role: 'user',
      },
    ]);
    // inject is context for the next request, not a wake-up: the agent stays idle.
    expect(agent.status).toBe('idle');
    expect(other.inbox.nextStep).toEqual([]);
  });

  it('kills a background task with bash_kill through the registry, whose answer is its only notice', async () => {
    const agent = createAgent();
    const marker = Math.floor(Math.random() * 1000) + 7000;
    const taskId = await startThroughHarness(agent, `sleep ${marker}`);
    await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 1);
    expect(text(await call('bash_kill', { task_id: taskId }, agent))).toBe(
      `killed background task ${taskId}`,
    );
    await suite.env.client.workflow.getHandle(taskId).result();
    // A notice starts before its task closes: a closed task without one never gets one.
    await expect(
      suite.env.client.workflow.getHandle<typeof completionNotice>(`${taskId}-notice`).describe(),
    ).rejects.toThrow(WorkflowNotFoundError);
    expect(agent.inbox.nextStep.filter((message) => userText(message).includes(taskId))).toEqual([]);
  });

  it("writes a background task's stdin with bash_input through the registry", async () => {
    const agent = createAgent();
    const started = await call(
      'bash',
      { command: 'head -n 1', description: 'Echo one line', run_in_background: true, keep_stdin_open: true },
      agent,
    );
    const taskId = startedTaskId(text(started));
    expect(text(await call('bash_input', { task_id: taskId, text: 'through dsh\n' }, agent))).toBe(
      `wrote 12 bytes to the stdin of task ${taskId}`,
    );
    await suite.env.client.workflow.getHandle(taskId).result();
    expect(text(await call('bash_output', { task_id: taskId }, agent))).toBe(
      'through dsh\n[status: completed, exit code: 0]',
    );
  });

  it('drops a repeated notice id (the agent host does, for every entry point)', async () => {
    const agent = createAgent();
    const sessions = dropRepeatedNotices(createHarnessSessions(() => app.agents));
    const options = {
      source: { kind: 'plugin' as const, plugin: 'tool-bash' },
      noticeId: `bash-${randomUUID()}-notice`,
    };
    expect(await sessions.inject(agent.id, 'once', options)).toBe(true);
    expect(await sessions.inject(agent.id, 'once', options)).toBe(true);
    expect(agent.inbox.nextStep.map(userText)).toEqual(['once']);
    expect(await sessions.inject('session-gone', 'never', { ...options, noticeId: 'other' })).toBe(false);
  });

  it('wakes an idle agent with followup when configured to', async () => {
    const agent = createAgent();
    const claimed: UserMessage[] = [];
    const inserted: UserMessage[] = [];
    const offClaimed = app.on('agent/inbox/claimed', ({ message }) => void claimed.push(message));
    const offInserted = app.on('agent/inbox/inserted', ({ message }) => void inserted.push(message));
    try {
      const sessions = createHarnessSessions(() => app.agents, { followup: true });
      expect(
        await sessions.inject(agent.id, 'wake up', {
          source: { kind: 'plugin', plugin: 'tool-bash' },
          noticeId: randomUUID(),
        }),
      ).toBe(true);
      // followup queues a next-turn message and wakes the driver, which claims it for a turn.
      await waitFor(() => claimed.some((message) => userText(message) === 'wake up'));
      expect(inserted.filter((message) => userText(message) === 'wake up')).toHaveLength(1);
    } finally {
      offClaimed();
      offInserted();
    }
  });

  it('stops its agent worker when unloaded, and a reloaded plugin delivers the notices that fell due', async () => {
    const agent = createAgent();
    await plugin.dispose();
    expect(app.tools.get('bash')).toBeUndefined();

    // The same host's tools, without the plugin: the task's notice waits for an agent worker.
    const tools = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      agentTaskQueue,
    });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const started = await bash.execute(
      { command: 'echo later', description: 'Finish while unloaded', run_in_background: true },
      { agent: { sessionId: agent.id, cwd: workspace } },
    );
    const taskId = startedTaskId(started.content[0]?.text ?? '');
    await suite.env.client.workflow.getHandle(taskId).result();
    const notice = suite.env.client.workflow.getHandle<typeof completionNotice>(`${taskId}-notice`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await notice.describe()).status.name).toBe('RUNNING');
    expect(agent.inbox.nextStep).toEqual([]);

    plugin = await loadPlugin();
    expect(await notice.result()).toBe('delivered');
    expect(agent.inbox.nextStep.map(userText)).toEqual([
      noticeText(taskId, '[status: completed, exit code: 0]', '[output]\nlater'),
    ]);
  });

  it('makes a durable approval request for a call its permissions ask about, and lands the decision as a notice', async () => {
    await plugin.dispose();
    plugin = await loadPlugin({ ...pluginConfig(), permissions: { ask: ['echo deploy'] } });
    try {
      const agent = createAgent();
      const answer = text(
        await call(
          'bash',
          { command: 'echo deploy x', description: 'Deploy', run_in_background: true },
          agent,
        ),
      );
      const approvalId = /^waiting for approval: (approval-[0-9a-f-]{36})$/.exec(answer)?.[1] as string;
      expect(approvalId).toBeDefined();
      // A command no rule asks about runs as before.
      expect(text(await call('bash', { command: 'echo hi', description: 'Hi' }, agent))).toBe('hi\n');
      const approvals = new Approvals({
        tasks: new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue }),
      });
      await approvals.decide(approvalId, { approved: false, by: 'alice', reason: 'not now' });
      await waitFor(() => agent.inbox.nextStep.length === 1, 20_000, 100);
      expect(agent.inbox.nextStep.map(userText)).toEqual([
        `approval ${approvalId} denied by alice: not now. \`echo deploy x\` did not run.`,
      ]);
    } finally {
      await plugin.dispose();
      plugin = await loadPlugin();
    }
  });
});
