/**
 * `bash` with Claude Code's Bash arguments (`bashArguments: 'claude-code'`) on a real server and
 * worker: its answers are durable-bash's texts, and a background `timeout` stops the task.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BashTaskResult } from '../../src/shared/task.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { agent, type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;

beforeAll(() => {
  tools = toolsByName(
    createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      bashArguments: 'claude-code',
    }),
  );
});

describe('bash with Claude Code arguments', () => {
  it("lists Claude Code's Bash schema", () => {
    expect(tools.bash.inputSchema).toMatchObject({
      type: 'object',
      required: ['command'],
      additionalProperties: false,
    });
    expect(Object.keys(tools.bash.inputSchema.properties as object)).toEqual([
      'command',
      'timeout',
      'description',
      'run_in_background',
      'dangerouslyDisableSandbox',
    ]);
  });

  it("presents a call as durable-bash's bash is presented, its description made from the command when absent", () => {
    expect(tools.bash.presentCall({ command: 'make all\nmake test', timeout: 5000 })).toEqual({
      card: 'terminal',
      title: 'make all\nmake test',
      description: 'make all',
    });
    expect(tools.bash.presentCall({ command: 'sleep 9', run_in_background: true })).toMatchObject({
      card: 'generic',
      title: 'sleep 9',
      content: [{ type: 'text', text: 'sleep 9' }],
    });
    expect(tools.bash.presentCall({ command: 'ls', bogus: 1 })).toEqual({
      card: 'generic',
      title: 'bash',
      kind: 'execute',
      rawInput: { command: 'ls', bogus: 1 },
    });
  });

  it("answers a foreground call with durable-bash's text, and its timeout fires as durable-bash's does", async () => {
    const exec = agent(`claude-code-${randomUUID()}`);
    expect(text(await tools.bash.execute({ command: 'echo hi; exit 3' }, exec))).toBe('hi\n[exit code: 3]');
    expect(text(await tools.bash.execute({ command: 'echo go; sleep 30', timeout: 1500 }, exec))).toBe(
      'go\n[timed out after 1500ms]\n[killed by signal: SIGTERM]',
    );
  });

  it('stops a background task at its timeout, and says so as durable-bash says it', async () => {
    const sessionId = `claude-code-${randomUUID()}`;
    const exec = agent(sessionId);
    const started = text(
      await tools.bash.execute(
        { command: 'echo up; sleep 30', description: 'Sleep', run_in_background: true, timeout: 2000 },
        exec,
      ),
    );
    const taskId = started.replace('started background task ', '');
    expect(started).toBe(`started background task ${taskId}`);
    const result = (await suite.env.client.workflow.getHandle(taskId).result()) as BashTaskResult;
    expect({ signal: result.signal, timedOutAfterMs: result.timedOutAfterMs }).toEqual({
      signal: 'SIGTERM',
      timedOutAfterMs: 2000,
    });
    expect(text(await tools.bash_output.execute({ task_id: taskId }, exec))).toBe(
      'up\n[status: killed by SIGTERM]',
    );
    const listed = text(await tools.bash_list.execute({ all: true }, exec));
    expect(listed).toMatch(new RegExp(`^${taskId}  killed +\\d+s +echo up; sleep 30$`, 'm'));
  });

  it('runs a background task with no timeout until it ends', async () => {
    const exec = agent(`claude-code-${randomUUID()}`);
    const started = text(
      await tools.bash.execute({ command: 'sleep 3; echo late', run_in_background: true }, exec),
    );
    const taskId = started.replace('started background task ', '');
    const result = (await suite.env.client.workflow.getHandle(taskId).result()) as BashTaskResult;
    expect({ exitCode: result.exitCode, timedOutAfterMs: result.timedOutAfterMs }).toEqual({
      exitCode: 0,
      timedOutAfterMs: undefined,
    });
    expect(text(await tools.bash_output.execute({ task_id: taskId }, exec))).toBe(
      'late\n[status: completed, exit code: 0]',
    );
  });

  it('refuses dangerouslyDisableSandbox: true and starts nothing', async () => {
    const exec = agent(`claude-code-${randomUUID()}`);
    const answer = await tools.bash.execute({ command: 'echo never', dangerouslyDisableSandbox: true }, exec);
    expect(answer).toEqual({
      content: [
        {
          type: 'text',
          text: "invalid dangerouslyDisableSandbox: not available: every command runs in its session's isolation, which nothing turns off; call again without it",
        },
      ],
      isError: true,
    });
    expect(text(await tools.bash_list.execute({ all: true }, exec))).toBe('(no background tasks)');
  });
});
