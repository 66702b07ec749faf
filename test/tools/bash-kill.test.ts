import { beforeAll, describe, expect, it } from 'vitest';
import { endedBy } from '../../src/client/task-kill.js';
import { statusSearchAttribute } from '../../src/shared/search-attributes.js';
import type { BashTaskResult } from '../../src/shared/task.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { agent, text } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let bash: Tool;
let bashKill: Tool;

beforeAll(async () => {
  const tools = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
  bash = tools.find((tool) => tool.name === 'bash') as Tool;
  bashKill = tools.find((tool) => tool.name === 'bash_kill') as Tool;
});

async function status(taskId: string): Promise<string | undefined> {
  return (await suite.env.client.workflow.getHandle(taskId).describe()).typedSearchAttributes.get(
    statusSearchAttribute,
  );
}

describe('bash_kill', () => {
  it('ends the whole process tree: a SIGTERM trap and a background grandchild', async () => {
    const marker = Math.floor(Math.random() * 1000) + 5000;
    const taskId = await startBackground(
      bash,
      `trap 'echo ignoring TERM' TERM; sleep ${marker} & while true; do sleep 0.1; done`,
    );
    await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 1);
    expect(await bashKill.execute({ task_id: taskId })).toEqual({
      content: [{ type: 'text', text: `killed background task ${taskId}` }],
    });
    expect(processesMatching(new RegExp(`^sleep ${marker}$`))).toEqual([]);
    const result = await suite.env.client.workflow.getHandle(taskId).result();
    expect(result.signal).toBe('SIGKILL');
    expect(result.killed).toBe(true);
    expect(await status(taskId)).toBe('killed');
  });

  it('reports a finished task as a no-op, not an error', async () => {
    const taskId = await startBackground(bash, 'echo done');
    await suite.env.client.workflow.getHandle(taskId).result();
    expect(await bashKill.execute({ task_id: taskId })).toEqual({
      content: [{ type: 'text', text: `task ${taskId} had already finished` }],
    });
  });

  it("tells from a run's result whose end it is: the kill's, or the command's own", async () => {
    // The run marks the end a kill caused; a command that ended before its kill reached the run
    // (sent while the server was down, say) is no kill, whatever the run did with the cancellation.
    expect(endedBy({ exitCode: 0, signal: null, killed: true } as BashTaskResult)).toBe('killed');
    expect(endedBy({ exitCode: null, signal: 'SIGTERM' } as BashTaskResult)).toBe('killed');
    expect(endedBy({ exitCode: 4, signal: null } as BashTaskResult)).toBe('already-finished');
    // The kill came, but the command's supervisor says it had ended on its own (a crash by SIGSEGV too).
    expect(endedBy({ exitCode: 4, signal: null, killed: false } as BashTaskResult)).toBe('already-finished');
    expect(endedBy({ exitCode: null, signal: 'SIGSEGV', killed: false } as BashTaskResult)).toBe(
      'already-finished',
    );
    const taskId = await startBackground(bash, 'echo done');
    expect((await suite.env.client.workflow.getHandle(taskId).result()).killed).toBeUndefined();
  });

  it('answers an unknown id with an error naming it', async () => {
    expect(await bashKill.execute({ task_id: 'bash-00000000-0000-4000-8000-000000000000' })).toEqual({
      content: [{ type: 'text', text: 'unknown bash task bash-00000000-0000-4000-8000-000000000000' }],
      isError: true,
    });
  });

  it('rejects bad arguments with one line', async () => {
    expect(await bashKill.execute({ task_id: ' ' })).toEqual({
      content: [{ type: 'text', text: 'invalid task_id: expected a non-blank task id, got " "' }],
      isError: true,
    });
  });
});

describe('bash_kill ownership fence', () => {
  it('refuses another session and a caller with no agent, and changes nothing', async () => {
    const taskId = await startBackground(bash, 'sleep 60', agent('session-a'));
    const refusal = {
      content: [{ type: 'text', text: `task ${taskId} belongs to another session` }],
      isError: true,
    };
    expect(await bashKill.execute({ task_id: taskId }, agent('session-b'))).toEqual(refusal);
    expect(await bashKill.execute({ task_id: taskId })).toEqual(refusal);
    expect(await status(taskId)).toBe('running');
    expect(text(await bashKill.execute({ task_id: taskId }, agent('session-a')))).toBe(
      `killed background task ${taskId}`,
    );
  });

  it('lets anyone touch an unowned task', async () => {
    const taskId = await startBackground(bash, 'sleep 60');
    expect(text(await bashKill.execute({ task_id: taskId }, agent('session-b')))).toBe(
      `killed background task ${taskId}`,
    );
  });

  it('treats an empty session id as a real owner, never as no owner', async () => {
    const taskId = await startBackground(bash, 'sleep 60', agent(''));
    expect((await bashKill.execute({ task_id: taskId })).isError).toBe(true);
    expect((await bashKill.execute({ task_id: taskId }, agent('x'))).isError).toBe(true);
    expect(text(await bashKill.execute({ task_id: taskId }, agent('')))).toBe(
      `killed background task ${taskId}`,
    );
  });
});
