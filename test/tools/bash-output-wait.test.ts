import { beforeAll, describe, expect, it } from 'vitest';
import type { Tool, ToolExecContext, ToolResult } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { timed } from '../helpers/timed.js';
import { agent, type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;
/** Tools whose bash_output waits at most CAP_MS. */
let capped: Tools;
const CAP_MS = 1_500;

beforeAll(() => {
  const options = { client: suite.env.client, taskQueue: suite.worker.taskQueue };
  tools = toolsByName(createBashTools(options));
  capped = toolsByName(createBashTools({ ...options, maxWaitMs: CAP_MS }));
});

const session = () => `session-${Math.random().toString(16).slice(2)}`;

const output = (args: Record<string, unknown>, exec: ToolExecContext = {}, using = tools) =>
  (using.bash_output as Tool).execute(args, exec);

describe('bash_output wait_ms', () => {
  it('answers as soon as new output appears, well before the wait is up', async () => {
    const taskId = await startBackground(tools.bash, 'sleep 1; echo late; sleep 60');
    await output({ task_id: taskId });
    const { value, ms } = await timed(() => output({ task_id: taskId, wait_ms: 60_000 }));
    expect(text(value)).toBe('late\n[status: running]');
    expect(ms).toBeLessThan(10_000);
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it('answers at once when unread output is waiting', async () => {
    const taskId = await startBackground(tools.bash, 'echo ready; sleep 60');
    await expect
      .poll(async () => text(await output({ task_id: taskId, wait_ms: 60_000 })))
      .not.toBe('(no new output)\n[status: running]');
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it("answers at the task's end when the end brings no output", async () => {
    const taskId = await startBackground(tools.bash, 'sleep 1.5; exit 4');
    const { value, ms } = await timed(() => output({ task_id: taskId, wait_ms: 60_000 }));
    expect(text(value)).toBe('(no new output)\n[status: completed, exit code: 4]');
    expect(ms).toBeGreaterThanOrEqual(1_000);
    expect(ms).toBeLessThan(15_000);
  });

  it('waits no longer than the configured cap, then answers as usual', async () => {
    const taskId = await startBackground(tools.bash, 'sleep 60');
    const { value, ms } = await timed(() => output({ task_id: taskId, wait_ms: 60_000 }, {}, capped));
    expect(text(value)).toBe('(no new output)\n[status: running]');
    expect(ms).toBeGreaterThanOrEqual(CAP_MS);
    expect(ms).toBeLessThan(CAP_MS + 8_000);
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it('stops waiting when the call is aborted, and reads nothing', async () => {
    const taskId = await startBackground(tools.bash, 'sleep 2; echo after; sleep 60');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    const { value, ms } = await timed(() =>
      output({ task_id: taskId, wait_ms: 60_000 }, { signal: abort.signal }),
    );
    expect(value).toEqual({
      content: [
        { type: 'text', text: `read of task ${taskId} aborted while waiting; its new output stays unread` },
      ],
      isError: true,
    });
    expect(ms).toBeLessThan(2_000);
    expect(text(await output({ task_id: taskId, wait_ms: 60_000 }))).toBe('after\n[status: running]');
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it('keeps the fence and the unknown-id answer before it waits', async () => {
    const taskId = await startBackground(tools.bash, 'sleep 60', agent('owner-a'));
    expect(await output({ task_id: taskId, wait_ms: 60_000 }, agent('owner-b'))).toEqual({
      content: [{ type: 'text', text: `task ${taskId} belongs to another session` }],
      isError: true,
    });
    const unknown = 'bash-00000000-0000-4000-8000-000000000000';
    expect(await output({ task_id: unknown, wait_ms: 60_000 })).toEqual({
      content: [{ type: 'text', text: `unknown bash task ${unknown}` }],
      isError: true,
    });
    expect(await output({ task_id: taskId, wait_ms: -5 }, agent('owner-a'))).toEqual({
      content: [{ type: 'text', text: 'invalid wait_ms: expected a number of milliseconds, got -5' }],
      isError: true,
    });
    await (tools.bash_kill as Tool).execute({ task_id: taskId }, agent('owner-a'));
  });
});

describe('bash_output filter', () => {
  it('shows only matching lines, counts the rest exactly, and a later read does not show them again', async () => {
    const taskId = await startBackground(
      tools.bash,
      'for i in $(seq 1 40); do if [ $((i % 10)) = 0 ]; then echo "FAIL $i"; else echo "ok $i"; fi; done; echo "FAIL err" >&2; printf tail',
    );
    await suite.env.client.workflow.getHandle(taskId).result();
    // The task has ended: the read is its result's, which names the files a background task keeps.
    expect(text(await output({ task_id: taskId, filter: '^FAIL' }))).toMatch(
      /^FAIL 10\nFAIL 20\nFAIL 30\nFAIL 40\n\[stderr\]\nFAIL err\n\[37 lines not matching the filter were left out; full output: \/\S+\/bash-[0-9a-f-]{36}\.stdout\]\n\[status: completed, exit code: 0\]$/,
    );
    expect(text(await output({ task_id: taskId }))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );
  });

  it('names the spill file of a running task, and says one line in the singular', async () => {
    // One write: a read that came between two writes would take `keep` alone, and the next one would
    // miss it. (bash's own printf writes line by line; coreutils' writes a pipe's buffer at exit.)
    const taskId = await startBackground(tools.bash, "/usr/bin/printf 'keep\\ndrop\\n'; sleep 60");
    // Every answer, in order, so that a failure shows how the output came.
    const answers: string[] = [];
    // Generous: under a loaded CI a command's first heartbeat can take many seconds.
    const until = Date.now() + 40_000;
    while (Date.now() < until && !answers.some((answer) => !answer.startsWith('(no new output)'))) {
      answers.push(text(await output({ task_id: taskId, filter: 'keep', wait_ms: 5_000 })));
    }
    expect(answers.filter((answer) => !answer.startsWith('(no new output)\n[status: running]'))).toEqual([
      expect.stringMatching(
        /^keep\n\[1 line not matching the filter was left out; full output: \/\S+\.stdout\]\n\[status: running\]$/,
      ),
    ]);
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it('leaves a line still being written for a later read, and a wait does not end on it', async () => {
    const taskId = await startBackground(
      tools.bash,
      "printf 'keep partial'; sleep 3; /usr/bin/printf ' line\\nother\\n'; sleep 60",
    );
    const { value: first, ms } = await timed(() =>
      output({ task_id: taskId, filter: 'keep', wait_ms: 1_500 }),
    );
    expect(text(first)).toBe('(no new output)\n[status: running]');
    expect(ms).toBeGreaterThanOrEqual(1_400);
    expect(text(await output({ task_id: taskId, filter: 'keep', wait_ms: 20_000 }))).toMatch(
      /^keep partial line\n\[1 line not matching the filter was left out; full output: \/\S+\.stdout\]\n\[status: running\]$/,
    );
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it('waits for a matching line: lines the filter leaves out do not end the wait, and are counted', async () => {
    const taskId = await startBackground(
      tools.bash,
      'echo noise; sleep 1; echo more noise; sleep 1.5; echo MATCH; sleep 60',
    );
    const { value, ms } = await timed(() => output({ task_id: taskId, filter: 'MATCH', wait_ms: 30_000 }));
    expect(text(value)).toMatch(
      /^MATCH\n\[2 lines not matching the filter were left out; full output: \/\S+\.stdout\]\n\[status: running\]$/,
    );
    // The command prints MATCH 2.5 s after it starts, and it starts after this read began.
    expect(ms).toBeGreaterThanOrEqual(2_000);
    await (tools.bash_kill as Tool).execute({ task_id: taskId });
  });

  it('answers an invalid expression with one line and moves nothing', async () => {
    const taskId = await startBackground(tools.bash, 'echo kept');
    await suite.env.client.workflow.getHandle(taskId).result();
    expect(await output({ task_id: taskId, filter: '(unclosed' })).toEqual({
      content: [
        { type: 'text', text: 'invalid filter: Invalid regular expression: /(unclosed/: Unterminated group' },
      ],
      isError: true,
    });
    expect(await output({ task_id: taskId, filter: 'a\n(' })).toEqual({
      content: [
        { type: 'text', text: 'invalid filter: Invalid regular expression: /a\\u000a(/: Unterminated group' },
      ],
      isError: true,
    });
    expect(text(await output({ task_id: taskId }))).toBe('kept\n[status: completed, exit code: 0]');
  });
});

describe('bash_list', () => {
  const list = (args: unknown, exec: ToolExecContext) => (tools.bash_list as Tool).execute(args, exec);
  const ROW = /^(bash-[0-9a-f-]{36}) +(\S+) +(\d+[smhd]) +(.*)$/;
  const rows = (result: ToolResult) =>
    text(result)
      .split('\n')
      .slice(1)
      .map((line) => ROW.exec(line)?.slice(1, 5));

  it("lists only the caller's tasks, running first, and the ended ones only with all", async () => {
    const a = session();
    const b = session();
    expect(text(await list({}, agent(a)))).toBe('(no background tasks)');
    const ended = await startBackground(tools.bash, 'echo done', agent(a));
    await suite.env.client.workflow.getHandle(ended).result();
    // A foreground run of the session is not a background task: never listed.
    await (tools.bash as Tool).execute({ command: 'echo foreground', description: 'Foreground' }, agent(a));
    const long = `sleep 60 # ${'x'.repeat(80)}`;
    const running = await startBackground(tools.bash, long, agent(a));
    const other = await startBackground(tools.bash, 'sleep 60', agent(b));

    await expect
      .poll(async () => rows(await list({}, agent(a))), { timeout: 10_000 })
      .toEqual([[running, 'running', expect.stringMatching(/^\d+s$/), `${long.slice(0, 59)}…`]]);
    expect(text(await list({}, agent(a))).split('\n')[0]).toMatch(/^ID +STATUS +AGE +COMMAND$/);
    await expect
      .poll(async () => rows(await list({ all: true }, agent(a))), { timeout: 10_000 })
      .toEqual([
        [running, 'running', expect.any(String), expect.any(String)],
        [ended, 'completed', expect.any(String), 'echo done'],
      ]);
    await expect
      .poll(async () => rows(await list({ all: true }, agent(b))), { timeout: 10_000 })
      .toEqual([[other, 'running', expect.any(String), 'sleep 60']]);
    // A caller with no agent session sees only tasks no session owns.
    expect(text(await list({ all: true }, {}))).not.toContain(running);
    await (tools.bash_kill as Tool).execute({ task_id: running }, agent(a));
    await (tools.bash_kill as Tool).execute({ task_id: other }, agent(b));
    await expect
      .poll(async () => text(await list({}, agent(a))), { timeout: 10_000 })
      .toBe('(no background tasks)');
  });

  it('answers bad arguments with one line', async () => {
    expect(await list({ all: 'yes' }, agent('x'))).toEqual({
      content: [{ type: 'text', text: 'invalid all: expected a boolean, got "yes"' }],
      isError: true,
    });
  });
});
