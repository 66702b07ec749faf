/**
 * Monitors (`notify_on`, `bash_monitor`) against a real dev server and a real command worker: the
 * lines that match come to the owning session as notices, gathered, in order, before the task's
 * completion notice; bad patterns are refused in one line and start or set nothing.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  MAX_MONITOR_PATTERN_CHARS,
  MONITOR_FLOOD_LINES,
  MONITOR_NOTICE_LINES,
} from '../../src/shared/limits.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { NoticeInbox, noticeOutcome } from '../helpers/notices.js';
import { waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text } from '../helpers/tool-calls.js';

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

/** An agent host with an agent worker: its tools by name and the session's inbox. */
async function agentHost() {
  const agentTaskQueue = `agent-${randomUUID()}`;
  const tools = createBashTools({ client: env.client, taskQueue: commandWorker.taskQueue, agentTaskQueue });
  const inbox = new NoticeInbox();
  agentWorkers.push(await startAgentWorker(env, { taskQueue: agentTaskQueue, agents: inbox }));
  const tool = (name: string) => tools.find((each) => each.name === name) as Tool;
  return { tool, inbox, exec: agent(`session-${randomUUID()}`) };
}

/**
 * The test's way to say when a command prints its next lines: the command waits at `read -r _`
 * (its stdin kept open), and `go` writes it a line.
 */
const WAIT = 'read -r _';
const go = (tool: (name: string) => Tool, taskId: string, exec: ToolExecContext) =>
  tool('bash_input').execute({ task_id: taskId, text: '\n' }, exec);

describe('monitors', () => {
  it('sends the lines matching notify_on as one notice, then the completion notice after it', async () => {
    const { tool, inbox, exec } = await agentHost();
    const taskId = await startBackground(
      tool('bash'),
      'for i in 1 2 3; do echo "ok $i"; echo "ERROR $i"; done; echo "FAIL late" >&2; echo done',
      exec,
      { notify_on: 'ERROR|FAIL' },
    );
    expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
    expect(inbox.notices).toEqual([
      {
        content: `background bash task ${taskId} printed 4 lines matching /ERROR|FAIL/:\nERROR 1\nERROR 2\nERROR 3\n[stderr] FAIL late`,
        noticeId: `${taskId}-match-1`,
      },
      {
        content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\nok 1\nERROR 1\nok 2\nERROR 2\nok 3\nERROR 3\ndone\n[stderr]\nFAIL late`,
        noticeId: `${taskId}-notice`,
      },
    ]);
  });

  it('sends the matches of a task its session killed, then no completion notice, and closes', async () => {
    const { tool, inbox, exec } = await agentHost();
    const taskId = await startBackground(tool('bash'), 'echo "ERROR 1"; sleep 600', exec, {
      notify_on: 'ERROR',
    });
    await waitFor(() => inbox.notices.length === 1, 10_000);
    expect(text(await tool('bash_kill').execute({ task_id: taskId }, exec))).toBe(
      `killed background task ${taskId}`,
    );
    // The notice workflow took the completion notice as answered by the kill, and closed.
    const channel = env.client.workflow.getHandle(`${taskId}-notice`);
    expect(await channel.result()).toBeUndefined();
    expect(inbox.notices).toEqual([
      {
        content: `background bash task ${taskId} printed 1 line matching /ERROR/:\nERROR 1`,
        noticeId: `${taskId}-match-1`,
      },
    ]);
    // Both runs took the patched path; each replays as it ran.
    for (const handle of [env.client.workflow.getHandle(taskId), channel]) {
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        await handle.fetchHistory(),
        handle.workflowId,
      );
    }
  });

  it('sets, replaces and clears the monitor of a running task with bash_monitor', async () => {
    const { tool, inbox, exec } = await agentHost();
    const taskId = await startBackground(
      tool('bash'),
      [
        'echo "ERROR before"',
        WAIT,
        'echo "ERROR one"; echo "WARN one"',
        WAIT,
        'echo "ERROR two"; echo "WARN two"',
        WAIT,
        'echo "WARN three"',
      ].join('; '),
      exec,
      { keep_stdin_open: true },
    );
    const monitor = (notifyOn: string | null) =>
      tool('bash_monitor').execute({ task_id: taskId, notify_on: notifyOn }, exec).then(text);
    expect(await monitor('ERROR')).toBe(
      `monitoring task ${taskId}: each line matching /ERROR/ comes as a notice`,
    );
    await go(tool, taskId, exec);
    await waitFor(() => inbox.notices.length === 1, 10_000);
    expect(await monitor('(?i)warn')).toBe(
      `monitoring task ${taskId}: each line matching /(?i)warn/ comes as a notice`,
    );
    await go(tool, taskId, exec);
    await waitFor(() => inbox.notices.length === 2, 10_000);
    expect(await monitor(null)).toBe(`cleared the monitor of task ${taskId}`);
    await go(tool, taskId, exec);
    expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
    expect(inbox.notices.map((notice) => notice.content.split('\n').slice(0, 2).join('\n'))).toEqual([
      `background bash task ${taskId} printed 1 line matching /ERROR/:\nERROR one`,
      `background bash task ${taskId} printed 1 line matching /(?i)warn/:\nWARN two`,
      `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]`,
    ]);
  });

  it('shows at most the bound of lines, counts the rest, and pauses a monitor that floods', async () => {
    const { tool, inbox, exec } = await agentHost();
    const floodLines = MONITOR_FLOOD_LINES + 50;
    const taskId = await startBackground(
      tool('bash'),
      `for i in $(seq 1 ${floodLines}); do echo "hit $i"; done; ${WAIT}; echo "hit after"`,
      exec,
      { notify_on: '^hit', keep_stdin_open: true },
    );
    await waitFor(
      () => inbox.notices.length === 1,
      10_000,
      50,
      () => JSON.stringify(inbox.notices),
    );
    await go(tool, taskId, exec);
    expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
    const shown = Array.from({ length: MONITOR_NOTICE_LINES }, (_, i) => `hit ${i + 1}`);
    const counted = MONITOR_FLOOD_LINES + 1;
    expect(inbox.notices[0]?.content).toBe(
      [
        `background bash task ${taskId} printed ${counted} lines matching /^hit/:`,
        ...shown,
        `[${counted - MONITOR_NOTICE_LINES} more matching lines; bash_output shows them]`,
        `[monitor paused: over ${MONITOR_FLOOD_LINES} matching lines in a minute; set it again with bash_monitor]`,
      ].join('\n'),
    );
    // Paused: "hit after" made no notice; the completion notice is the next.
    expect(inbox.notices).toHaveLength(2);
    expect(inbox.notices[1]?.noticeId).toBe(`${taskId}-notice`);
  });

  it('matches a terminal task by its text, with control sequences removed', async () => {
    const { tool, inbox, exec } = await agentHost();
    const taskId = await startBackground(
      tool('bash'),
      String.raw`printf '\033[1;31mERROR\033[0m in red\r\n'; printf 'fine\r\n'`,
      exec,
      { tty: true, notify_on: '^ERROR in' },
    );
    expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
    expect(inbox.notices[0]?.content).toBe(
      `background bash task ${taskId} printed 1 line matching /^ERROR in/:\nERROR in red`,
    );
  });

  it("marks a monitored task's notice undelivered when its window runs out with no agent worker", async () => {
    // An agent host whose worker never runs: every notice waits out its window.
    const tools = createBashTools({
      client: env.client,
      taskQueue: commandWorker.taskQueue,
      agentTaskQueue: `agent-down-${randomUUID()}`,
      noticeWindowMs: 1_000,
    });
    const tool = (name: string) => tools.find((each) => each.name === name) as Tool;
    const exec = agent(`session-${randomUUID()}`);
    const taskId = await startBackground(tool('bash'), 'echo "ERROR once"', exec, { notify_on: 'ERROR' });
    expect(await noticeOutcome(env.client, taskId)).toBe('expired');
    let listing = '';
    for (let attempt = 0; attempt < 50 && !listing.includes('notice not delivered'); attempt++) {
      listing = text(await tool('bash_list').execute({}, exec));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listing.split('\n')[1]).toMatch(
      new RegExp(`^${taskId}  completed \\(notice not delivered\\)  \\d+s +echo "ERROR once"$`),
    );
  });

  it('refuses a bad pattern in one line and starts or sets nothing', async () => {
    const { tool, exec } = await agentHost();
    const bash = tool('bash');
    const start = (args: Record<string, unknown>) =>
      bash
        .execute({ command: 'true', description: 'Does nothing', run_in_background: true, ...args }, exec)
        .then(text);
    expect(await start({ notify_on: '(?=x)' })).toBe(
      'invalid notify_on: not a pattern RE2 accepts (error parsing regexp: invalid or unsupported Perl syntax: `(?=`)',
    );
    expect(await start({ notify_on: 'x'.repeat(MAX_MONITOR_PATTERN_CHARS + 1) })).toBe(
      `invalid notify_on: the pattern has ${MAX_MONITOR_PATTERN_CHARS + 1} characters, over the ${MAX_MONITOR_PATTERN_CHARS} allowed`,
    );
    expect(await start({ notify_on: '' })).toBe('invalid notify_on: expected a pattern, got ""');
    expect(
      text(await bash.execute({ command: 'true', description: 'Does nothing', notify_on: 'x' }, exec)),
    ).toBe('invalid notify_on: a monitor watches a background run; set run_in_background: true');
    expect(text(await tool('bash_list').execute({ all: true }, exec))).toBe('(no background tasks)');
    // No session, no notices: nothing starts.
    const noNotices = createBashTools({ client: env.client, taskQueue: commandWorker.taskQueue });
    expect(noNotices.map((each) => each.name)).not.toContain('bash_monitor');
    const plainBash = noNotices.find((each) => each.name === 'bash') as Tool;
    expect(
      text(
        await plainBash.execute(
          { command: 'true', description: 'Does nothing', run_in_background: true, notify_on: 'x' },
          exec,
        ),
      ),
    ).toBe(
      'notify_on needs a background run of an agent session whose host takes notices: nothing was started',
    );
    const taskId = await startBackground(bash, 'sleep 30', exec);
    const monitor = tool('bash_monitor');
    expect(text(await monitor.execute({ task_id: taskId, notify_on: 'a(' }, exec))).toBe(
      'invalid notify_on: not a pattern RE2 accepts (error parsing regexp: missing closing ): `a(`)',
    );
    expect(text(await monitor.execute({ task_id: taskId, notify_on: 'x' }, agent('someone-else')))).toBe(
      `task ${taskId} belongs to another session`,
    );
    await tool('bash_kill').execute({ task_id: taskId }, exec);
    expect(text(await monitor.execute({ task_id: taskId, notify_on: 'x' }, exec))).toBe(
      `task ${taskId} has ended: nothing was set`,
    );
  });
});
