/**
 * `durable-bash mcp --channel` (the built bin, over stdio) with the MCP SDK's client: it declares
 * the `claude/channel` capability, and delivers each notice once as `notifications/claude/channel`
 * (its kind and what it is about as meta), never as a logging notification nor atop a tool result.
 * What Claude Code does with them is test/claude-code/channel.test.ts's.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Approvals } from '../../src/client/approvals.js';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { channelMessage } from '../../src/mcp/channel-notices.js';
import { CHANNEL_CONNECT_DEADLINE_MS } from '../../src/shared/limits.js';
import { noticeOutputIsCut } from '../../src/shared/render-notice.js';
import { startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { cli } from '../helpers/cli.js';
import { callTool, textOf, textsOf, useMcpServers } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const suite = useDevServerWithWorker();
let stateDir: string;

beforeAll(() => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-channel-'));
});

const mcp = useMcpServers(() => ({
  address: suite.env.address,
  taskQueue: suite.worker.taskQueue,
  stateDir,
}));

const session = () => `mcp-channel-${randomUUID()}`;

describe('durable-bash mcp --channel', () => {
  it('declares the claude/channel capability only with --channel', async () => {
    const channel = await mcp.stdio(session(), ['--channel']);
    expect(channel.client.getServerCapabilities()?.experimental).toEqual({ 'claude/channel': {} });
    const plain = await mcp.stdio(session());
    expect(plain.client.getServerCapabilities()?.experimental).toBeUndefined();
  });

  it('refuses --channel with --http: a message with no stream open to take it would be lost', async () => {
    const run = await cli(['mcp', '--channel', '--http', '127.0.0.1:0']);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: '' });
    // Then the command's usage, as for every flag the CLI refuses.
    expect(run.stderr.split('\n')[0]).toBe(
      "error: option '--channel' cannot be used with option '--http <[host:]port>'",
    );
  });

  it('delivers a completion notice once as a channel message, neither as a log nor atop a result, and its output is read', async () => {
    const { client, logs, channel } = await mcp.stdio(session(), ['--channel']);
    const started = textOf(
      await callTool(client, 'bash', {
        command: 'echo done',
        description: 'Print done',
        run_in_background: true,
      }),
    );
    const taskId = /^started background task (bash-[0-9a-f-]{36})/.exec(started)?.[1] ?? '';
    await waitFor(() => channel.length > 0, 20_000);
    expect(channel).toEqual([
      {
        content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\ndone`,
        meta: { kind: 'completion', task_id: taskId },
      },
    ]);
    // The message showed all of the output: the read does not show it again.
    expect(textsOf(await callTool(client, 'bash_output', { task_id: taskId }))).toEqual([
      '(no new output)\n[status: completed, exit code: 0]',
    ]);
    expect(textsOf(await callTool(client, 'bash', { command: 'echo next', description: 'Next' }))).toEqual([
      'next\n',
    ]);
    expect(logs).toEqual([]);
    expect(channel).toHaveLength(1);
  });

  it('sends a notice that was due when the client connected once it listed its tools and settled', async () => {
    const id = session();
    const first = await mcp.stdio(id, ['--channel']);
    const started = textOf(
      await callTool(first.client, 'bash', {
        command: 'sleep 2; echo later',
        description: 'Print later',
        run_in_background: true,
      }),
    );
    const taskId = /^started background task (bash-[0-9a-f-]{36})/.exec(started)?.[1] ?? '';
    first.kill();
    await suite.env.client.workflow.getHandle(taskId).result();
    const second = await mcp.stdio(id, ['--channel']);
    // Until the client lists its tools (Claude Code registers its channel handler after that), nothing goes.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(second.channel).toEqual([]);
    await second.client.listTools();
    await waitFor(() => second.channel.length > 0, 10_000);
    expect(second.channel.map(({ meta }) => meta)).toEqual([{ kind: 'completion', task_id: taskId }]);
  });

  it('delivers a reminder as a channel message of kind reminder', async () => {
    const { client, channel } = await mcp.stdio(session(), ['--channel']);
    const set = textOf(await callTool(client, 'bash_remind', { after_ms: 500, note: 'look again' }));
    const reminderId = /^reminder (remind-[0-9a-f-]{36}) set/.exec(set)?.[1] ?? '';
    await waitFor(() => channel.length > 0, 20_000);
    expect(channel).toEqual([
      { content: 'reminder: look again', meta: { kind: 'reminder', reminder_id: reminderId } },
    ]);
  });

  it('gives the channel up for a Claude Code connection that came too late for it to take the channel', async () => {
    // The server's process starts CHANNEL_CONNECT_DEADLINE_MS and a little late: its first connection
    // initializes after the deadline, as one claude stopped waiting for before its first turn. (Only
    // Claude Code's: another client is not known to wait so.)
    const sleep = path.join(stateDir, 'sleep.cjs');
    writeFileSync(
      sleep,
      `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${CHANNEL_CONNECT_DEADLINE_MS + 500});\n`,
    );
    const { client, channel, stderr } = await mcp.stdio(session(), ['--channel'], undefined, {
      env: { NODE_OPTIONS: `--require ${sleep}` },
      clientName: 'claude-code',
    });
    await expect
      .poll(stderr)
      .toMatch(
        /^durable-bash: the client connected \d+ ms after this server started, too late for Claude Code to take its channel in this turn: notices go atop tool results instead$/m,
      );
    const taskId = startedTaskId(
      textOf(
        await callTool(client, 'bash', {
          command: 'echo done',
          description: 'Done',
          run_in_background: true,
        }),
      ),
    );
    const notice = `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\ndone`;
    await expect
      .poll(
        async () => textsOf(await callTool(client, 'bash', { command: 'true', description: 'Nothing' })),
        {
          timeout: 20_000,
        },
      )
      .toContainEqual(notice);
    expect(channel).toEqual([]);
  });

  it("delivers an approval request's outcome as a channel message of kind approval", async () => {
    const id = session();
    const { client, channel } = await mcp.stdio(id, ['--channel', '--ask', 'echo deploy']);
    const waiting = textOf(
      await callTool(client, 'bash', {
        command: 'echo deploy now',
        description: 'Deploy',
        run_in_background: true,
      }),
    );
    const approvalId = /(approval-[0-9a-f-]{36})/.exec(waiting)?.[1] ?? '';
    const approvals = new Approvals({
      tasks: new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue }),
    });
    await approvals.decide(approvalId, { approved: false, by: 'alice', reason: 'not now' });
    await waitFor(() => channel.length > 0, 20_000);
    expect(channel).toEqual([
      {
        content: `approval ${approvalId} denied by alice: not now. \`echo deploy now\` did not run.`,
        meta: { kind: 'approval', approval_id: approvalId },
      },
    ]);
  });
});

describe('channel messages', () => {
  it('name each kind of notice in their meta', () => {
    const taskId = `bash-${randomUUID()}`;
    expect(channelMessage(`${taskId}-notice`, 'x').meta).toEqual({ kind: 'completion', task_id: taskId });
    expect(channelMessage(`${taskId}-match-3`, 'x').meta).toEqual({ kind: 'monitor', task_id: taskId });
    expect(channelMessage('remind-1', 'x').meta).toEqual({ kind: 'reminder', reminder_id: 'remind-1' });
    expect(channelMessage('approval-1', 'x').meta).toEqual({ kind: 'approval', approval_id: 'approval-1' });
    expect(channelMessage('other', 'x').meta).toEqual({ kind: 'notice' });
  });

  it('tell a notice that shows only the end of its output by its marker line', () => {
    const first =
      'background bash task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.';
    expect(noticeOutputIsCut(`${first}\n[output]\na`)).toBe(false);
    expect(noticeOutputIsCut(`${first}\n[output since the last read]\na`)).toBe(false);
    expect(noticeOutputIsCut(`${first}\n(no output)`)).toBe(false);
    expect(noticeOutputIsCut(first)).toBe(false);
    expect(
      noticeOutputIsCut(`${first}\n[output: the last 2000 characters; bash_output returns all of it]\na`),
    ).toBe(true);
    expect(
      noticeOutputIsCut(
        `${first}\n[output since the last read: the last 10 characters; bash_output returns all of it]\na`,
      ),
    ).toBe(true);
    expect(
      noticeOutputIsCut(`${first}\n[the last 3 rows of the screen; bash_output shows all of it]\na`),
    ).toBe(true);
  });
});
