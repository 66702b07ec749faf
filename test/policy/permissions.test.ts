import { existsSync, mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskListQuery } from '../../src/client/task-list.js';
import type { Approver, PermissionPolicy, PermissionRequest } from '../../src/policy/policy-types.js';
import { createRulePolicy } from '../../src/policy/rules.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { type BashToolsOptions, createBashTools } from '../../src/tools/create-bash-tools.js';
import { startedTaskId } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';

let env: TestWorkflowEnvironment;
let worker: RunningWorker;
/** A worker that refuses `touch` and anything matching /secret/, whatever the client allows. */
let denyingWorker: RunningWorker;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnv();
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-permissions-')));
  [worker, denyingWorker] = await Promise.all([
    startBashWorker(env, { defaultWorkdir: dir }),
    startBashWorker(env, {
      defaultWorkdir: dir,
      denyCommands: [{ prefix: 'touch' }, { pattern: /secret/, reason: 'secrets stay put' }],
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([worker?.stop(), denyingWorker?.stop()]);
  await env?.teardown();
});

const agent = (sessionId: string, signal?: AbortSignal): ToolExecContext => ({
  agent: { sessionId, cwd: dir },
  ...(signal ? { signal } : {}),
});

function tools(options: Omit<BashToolsOptions, 'client'> = {}, on = worker): Tools {
  return toolsByName(createBashTools({ client: env.client, taskQueue: on.taskQueue, ...options }));
}

const bash = (using: Tools, command: string, exec: ToolExecContext, background = false) =>
  (using.bash as Tool).execute(
    { command, description: 'Permission test', ...(background ? { run_in_background: true } : {}) },
    exec,
  );

/** Every workflow a session's calls started, however they ended. */
async function workflowsOf(sessionId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of env.client.workflow.list({ query: taskListQuery({ owner: sessionId }) })) {
    ids.push(execution.workflowId);
  }
  return ids;
}

const marker = (name: string) => path.join(dir, name);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets visibility catch up, so an empty listing means nothing was started. */
async function settled(): Promise<void> {
  await sleep(1_000);
}

describe('the bash permission policy', () => {
  const policy = createRulePolicy({
    rules: [
      { prefix: 'echo', action: 'allow' },
      { prefix: 'touch', action: 'ask' },
      { prefix: 'rm', action: 'deny', reason: 'deleting files is not allowed' },
    ],
    defaultAction: 'ask',
  });

  it('runs an allowed command', async () => {
    expect(await bash(tools({ policy }), 'echo allowed', agent('allowed'))).toEqual({
      content: [{ type: 'text', text: 'allowed\n' }],
    });
    expect(await workflowsOf('allowed')).toHaveLength(1);
  });

  it('answers a denied call with one line and starts nothing', async () => {
    const file = marker('denied');
    const result = await bash(tools({ policy }), `echo hi && rm -f x; touch ${file}`, agent('denied'));
    expect(result).toEqual({
      content: [{ type: 'text', text: 'command denied: deleting files is not allowed' }],
      isError: true,
    });
    const background = await bash(tools({ policy }), `rm -rf ${dir}`, agent('denied'), true);
    expect(text(background)).toBe('command denied: deleting files is not allowed');
    await settled();
    expect(await workflowsOf('denied')).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it('runs an asked command the host approves, telling the approver what and why', async () => {
    const file = marker('approved');
    const asked: [PermissionRequest, string][] = [];
    const approve: Approver = async (request, reason) => {
      asked.push([request, reason]);
      return true;
    };
    const result = await bash(tools({ policy, approve }), `touch ${file} && echo made`, agent('approved'));
    expect(result).toEqual({ content: [{ type: 'text', text: 'made\n' }] });
    expect(existsSync(file)).toBe(true);
    expect(asked).toEqual([
      [
        { command: `touch ${file} && echo made`, workdir: dir, background: false, sessionId: 'approved' },
        `\`touch ${file}\` matches the ask rule \`touch\``,
      ],
    ]);
  });

  it('starts nothing when the host refuses an asked command', async () => {
    const file = marker('refused');
    const result = await bash(
      tools({ policy, approve: async () => false }),
      `touch ${file}`,
      agent('refused'),
    );
    expect(result).toEqual({
      content: [
        { type: 'text', text: `command not approved: \`touch ${file}\` matches the ask rule \`touch\`` },
      ],
      isError: true,
    });
    await settled();
    expect(await workflowsOf('refused')).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it('denies an asked command when no approver is configured', async () => {
    expect(text(await bash(tools({ policy }), 'make', agent('no-approver')))).toBe(
      'command denied: `make` is not covered by any rule, and no approver is configured',
    );
  });

  it('starts nothing when the call is aborted while it waits for approval', async () => {
    const file = marker('aborted');
    const controller = new AbortController();
    const approve: Approver = () => new Promise<boolean>(() => undefined);
    setTimeout(() => controller.abort(), 200);
    const result = await bash(
      tools({ policy, approve }),
      `touch ${file}`,
      agent('aborted', controller.signal),
    );
    expect(result).toEqual({
      content: [
        { type: 'text', text: 'command not approved: the call was aborted while waiting for approval' },
      ],
      isError: true,
    });
    await settled();
    expect(await workflowsOf('aborted')).toEqual([]);
  });

  it('sees what a custom policy is asked: workdir, background flag and session', async () => {
    const seen: PermissionRequest[] = [];
    const recording: PermissionPolicy = (request) => {
      seen.push(request);
      return { action: 'deny', reason: 'recorded' };
    };
    await bash(tools({ policy: recording }), 'sleep 1', agent('custom'), true);
    expect(seen).toEqual([{ command: 'sleep 1', workdir: dir, background: true, sessionId: 'custom' }]);
  });
});

describe('the background task quota', () => {
  const LIMIT = 2;
  const quotaLine = `too many background tasks: this session already runs ${LIMIT} (the limit is ${LIMIT}); wait for one to end or kill one with bash_kill`;

  async function killAll(using: Tools, sessionId: string): Promise<void> {
    for (const taskId of await workflowsOf(sessionId)) {
      await (using.bash_kill as Tool).execute({ task_id: taskId }, agent(sessionId));
    }
  }

  it('refuses a background start past the limit with one line, and starts nothing', async () => {
    const limited = tools({ maxBackgroundTasksPerSession: LIMIT });
    for (let i = 0; i < LIMIT; i++) {
      expect(text(await bash(limited, 'sleep 60', agent('quota'), true))).toMatch(
        /^started background task bash-/,
      );
    }
    const file = marker('over-quota');
    expect(await bash(limited, `touch ${file}; sleep 60`, agent('quota'), true)).toEqual({
      content: [{ type: 'text', text: quotaLine }],
      isError: true,
    });
    await settled();
    expect(await workflowsOf('quota')).toHaveLength(LIMIT);
    expect(existsSync(file)).toBe(false);

    // Foreground calls and other sessions are not held back.
    expect(text(await bash(limited, 'echo still', agent('quota')))).toBe('still\n');
    expect(text(await bash(limited, 'sleep 60', agent('quota-other'), true))).toMatch(
      /^started background task /,
    );

    // Once one of the session's tasks ends, it may start another.
    const [first] = await workflowsOf('quota');
    await (limited.bash_kill as Tool).execute({ task_id: first }, agent('quota'));
    expect(text(await bash(limited, 'sleep 60', agent('quota'), true))).toMatch(/^started background task /);

    await killAll(limited, 'quota');
    await killAll(limited, 'quota-other');
  });

  it('holds in a burst of concurrent starts from one agent host', async () => {
    const limited = tools({ maxBackgroundTasksPerSession: LIMIT });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => bash(limited, 'sleep 60', agent('burst'), true)),
    );
    const texts = results.map(text);
    expect(texts.filter((t) => t.startsWith('started background task '))).toHaveLength(LIMIT);
    expect(texts.filter((t) => t === quotaLine)).toHaveLength(5 - LIMIT);
    await settled();
    expect(await workflowsOf('burst')).toHaveLength(LIMIT);
    await killAll(limited, 'burst');
  });

  it('counts only running tasks', async () => {
    const limited = tools({ maxBackgroundTasksPerSession: 1 });
    const started = text(await bash(limited, 'true', agent('ended'), true));
    await env.client.workflow.getHandle(startedTaskId(started)).result();
    expect(text(await bash(limited, 'true', agent('ended'), true))).toMatch(/^started background task /);
  });

  it("does not count the session's foreground runs", async () => {
    const limited = tools({ maxBackgroundTasksPerSession: 1 });
    const foreground = bash(limited, 'sleep 3; echo foreground', agent('with-foreground'));
    await expect.poll(async () => (await workflowsOf('with-foreground')).length, { timeout: 10_000 }).toBe(1);
    expect(text(await bash(limited, 'sleep 60', agent('with-foreground'), true))).toMatch(
      /^started background task /,
    );
    expect(text(await foreground)).toBe('foreground\n');
    await killAll(limited, 'with-foreground');
  });

  it('keeps a long foreground run in the foreground while the session is at its limit, and moves it below', async () => {
    const limited = tools({ maxBackgroundTasksPerSession: 1, autoBackgroundAfterMs: 300 });
    const background = text(await bash(limited, 'sleep 60', agent('at-limit'), true));
    expect(background).toMatch(/^started background task /);
    // At the limit: the run is not moved, and the call answers with its end.
    expect(text(await bash(limited, 'sleep 1.5; echo stayed', agent('at-limit')))).toBe('stayed\n');
    await (limited.bash_kill as Tool).execute({ task_id: startedTaskId(background) }, agent('at-limit'));
    // Below it: moved, and then it counts, so a background start is refused.
    expect(text(await bash(limited, 'sleep 60', agent('at-limit')))).toMatch(
      /^\(no output\)\n\[still running after 300ms; moved to background task bash-[0-9a-f-]{36}\. Read its output with bash_output\.\]$/,
    );
    expect(await bash(limited, 'sleep 60', agent('at-limit'), true)).toEqual({
      content: [
        {
          type: 'text',
          text: 'too many background tasks: this session already runs 1 (the limit is 1); wait for one to end or kill one with bash_kill',
        },
      ],
      isError: true,
    });
    await killAll(limited, 'at-limit');
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => tools({ maxBackgroundTasksPerSession: 0 })).toThrow(
      'maxBackgroundTasksPerSession must be a positive integer or Infinity, got 0',
    );
  });
});

describe("the worker's deny rules", () => {
  it('fail a foreground task before anything runs, whatever the client allows', async () => {
    const file = marker('worker-denied');
    const permissive = tools({ policy: () => ({ action: 'allow' }) }, denyingWorker);
    expect(await bash(permissive, `echo start; touch ${file}`, agent('worker'))).toEqual({
      content: [
        { type: 'text', text: `denied by the worker: \`touch ${file}\` matches the deny rule \`touch\`` },
      ],
      isError: true,
    });
    expect(existsSync(file)).toBe(false);
  });

  it('fail a background task, and bash_output says why', async () => {
    const file = marker('worker-denied-background');
    const using = tools({}, denyingWorker);
    const started = text(await bash(using, `cat ~/.secret > ${file}`, agent('worker'), true));
    const taskId = startedTaskId(started);
    await env.client.workflow
      .getHandle(taskId)
      .result()
      .catch(() => undefined);
    expect(text(await (using.bash_output as Tool).execute({ task_id: taskId }, agent('worker')))).toBe(
      '(no new output)\n[status: failed: denied by the worker: secrets stay put]',
    );
    expect(existsSync(file)).toBe(false);
  });

  it('refuse a command they cannot read with certainty', async () => {
    const file = marker('worker-uncertain');
    const using = tools({}, denyingWorker);
    expect(text(await bash(using, `"$(printf touch)" ${file}`, agent('worker')))).toBe(
      'denied by the worker: cannot check the command with certainty: the command name is computed at run time: $(printf touch)',
    );
    expect(existsSync(file)).toBe(false);
  });

  it('let everything else run', async () => {
    expect(text(await bash(tools({}, denyingWorker), 'echo fine', agent('worker')))).toBe('fine\n');
  });
});
