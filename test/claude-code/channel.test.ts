/**
 * The real `claude` binary with `durable-bash mcp --channel` as a channel plugin's server, against
 * the scripted Messages API: a task's end starts a turn of the idle session by itself, its notice
 * arrives once (across a crash of claude and a `--resume` too), and its output reaches the model once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import type { TaskId } from '../../src/shared/task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import {
  CHANNEL_ENV,
  CHANNEL_SOURCE,
  channelSessionArgs,
  pluginTool,
  seedChannels,
  userMessage,
  writeChannelPlugin,
} from '../helpers/claude-channel.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import { CLI_BIN } from '../helpers/cli.js';
import {
  type ContentBlock,
  lastUserMessage,
  type MessagesRequest,
  startScriptedMessagesApi,
  textOfContent,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

/** The text blocks of a request's last user message. */
function lastUserBlocks(request: MessagesRequest): ContentBlock[] {
  const content = lastUserMessage(request)?.content;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? []);
}

/** Whether a request's last user message holds a channel message. */
const carriesChannel = (request: MessagesRequest) =>
  lastUserBlocks(request).some((block) => block.text?.startsWith(`<channel source="${CHANNEL_SOURCE}"`));

/** The task id a `bash` start's tool result names. */
function startedTask(request: MessagesRequest): string {
  const text = textOfContent(toolResultsOf(request)[0]?.content);
  const taskId = /^started background task (bash-[A-Za-z0-9-]+)/.exec(text)?.[1];
  if (taskId === undefined) throw new Error(`no task started: ${text}`);
  return taskId;
}

/** The `durable-bash mcp` process a claude process started (its child), by pid. */
function mcpServerOf(claudePid: number | undefined): number {
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (ppid === claudePid && args.includes(CLI_BIN) && args.includes('mcp')) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`claude ${claudePid} runs no durable-bash mcp`);
}

/** The conversation id a stream-json claude printed (its `system/init` message). */
function conversationOf(stdout: string): string {
  const id = /"session_id":"([0-9a-f-]{36})"/.exec(stdout)?.[1];
  if (id === undefined) throw new Error(`no session id in: ${stdout.slice(0, 500)}`);
  return id;
}

describe.skipIf(skipWithoutClaudeCode())('claude with durable-bash mcp --channel', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-channel-'));
  });

  /** The channel plugin, in the test's home, whose server is `durable-bash mcp --channel` for `session`. */
  const plugin = (session: string) =>
    writeChannelPlugin(path.join(claude.home, 'plugins'), process.execPath, [
      CLI_BIN,
      'mcp',
      '--channel',
      ...['--session', session, '--state-dir', stateDir],
      ...['--address', suite.env.address, '--task-queue', suite.worker.taskQueue],
    ]);

  const start = (command: string) => [
    {
      type: 'tool_use' as const,
      name: pluginTool('bash'),
      input: { command, description: 'Tick', run_in_background: true },
    },
  ];

  it("starts a turn of the idle session with the task's completion notice, and bash_output does not repeat its output", async () => {
    seedChannels(claude.home);
    let taskId = '';
    const api = await startScriptedMessagesApi(
      start('sleep 2; echo tick'),
      (request) => {
        taskId = startedTask(request);
        return [{ type: 'text', text: 'Started.' }];
      },
      () => [{ type: 'tool_use', name: pluginTool('bash_output'), input: { task_id: taskId } }],
      [{ type: 'text', text: 'Read.' }],
    );
    try {
      const pluginDir = plugin(`claude-channel-${randomUUID()}`);
      const session = claude.spawn(api.url, channelSessionArgs(pluginDir, ['bash', 'bash_output']), {
        env: CHANNEL_ENV,
        keepStdinOpen: true,
      });
      session.send(userMessage('Start it.'));
      const woken = await api.waitForRequest(carriesChannel);
      // The turn has no user input: its last user message is the channel message (and reminders).
      const texts = lastUserBlocks(woken).map((block) => block.text ?? '');
      expect(texts.filter((text) => !text.startsWith('<system-reminder>'))).toEqual([
        `<channel source="${CHANNEL_SOURCE}" kind="completion" task_id="${taskId}">\n` +
          `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n` +
          '[output]\ntick\n</channel>',
      ]);
      const read = await api.waitForRequest((request) => api.conversationRequests().indexOf(request) === 3);
      // The notice showed the output: the read does not show it again.
      expect(textOfContent(toolResultsOf(read)[0]?.content)).toBe(
        '(no new output)\n[status: completed, exit code: 0]',
      );
      session.child.stdin?.end();
      await session.done;
      expect(api.stepErrors).toEqual([]);
      // Once, and only as a channel message: no tool result carries it.
      const requests = api.conversationRequests();
      expect(requests.filter(carriesChannel)).toHaveLength(1);
      expect(
        requests.flatMap(toolResultsOf).map((result) => textOfContent(result.content)),
      ).not.toContainEqual(expect.stringContaining('background bash task'));
    } finally {
      await api.close();
    }
  });
  it('delivers a notice that fell due while its MCP server was down once, after claude reconnected it', async () => {
    seedChannels(claude.home);
    let taskId = '';
    const api = await startScriptedMessagesApi(
      start('sleep 2; echo tock'),
      (request) => {
        taskId = startedTask(request);
        return [{ type: 'text', text: 'Started.' }];
      },
      [{ type: 'text', text: 'Noted.' }],
    );
    try {
      const pluginDir = plugin(`claude-channel-${randomUUID()}`);
      const session = claude.spawn(api.url, channelSessionArgs(pluginDir, ['bash']), {
        env: CHANNEL_ENV,
        keepStdinOpen: true,
      });
      session.send(userMessage('Start it.'));
      await api.waitForRequest((request) => api.conversationRequests().indexOf(request) === 1);
      await new Promise((resolve) => setTimeout(resolve, 500)); // the answer 'Started.' goes out
      process.kill(mcpServerOf(session.child.pid), 'SIGKILL');
      // The task ends with no server to take its notice.
      await new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue }).result(
        taskId as TaskId,
      );
      session.send({
        type: 'control_request',
        request_id: 'reconnect-1',
        request: { subtype: 'mcp_reconnect', serverName: CHANNEL_SOURCE },
      });
      const woken = await api.waitForRequest(carriesChannel);
      expect(lastUserBlocks(woken).map((block) => block.text)).toContainEqual(
        expect.stringContaining(`task_id="${taskId}">\nbackground bash task ${taskId} finished`),
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // a repeat would come by now
      session.child.stdin?.end();
      await session.done;
      expect(api.conversationRequests().filter(carriesChannel)).toHaveLength(1);
      expect(api.stepErrors).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('delivers a notice that fell due while the conversation was closed once, when it is resumed in a new process', async () => {
    seedChannels(claude.home);
    let taskId = '';
    const first = await startScriptedMessagesApi(start('sleep 2; echo late'), (request) => {
      taskId = startedTask(request);
      return [{ type: 'text', text: 'Started.' }];
    });
    const second = await startScriptedMessagesApi(
      [{ type: 'text', text: 'Resumed.' }],
      [{ type: 'text', text: 'Noted.' }],
    );
    try {
      const pluginDir = plugin(`claude-channel-${randomUUID()}`);
      const args = channelSessionArgs(pluginDir, ['bash']);
      const crashed = claude.spawn(first.url, args, { env: CHANNEL_ENV, keepStdinOpen: true });
      crashed.send(userMessage('Start it.'));
      await first.waitForRequest((request) => first.conversationRequests().indexOf(request) === 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      crashed.crash();
      await crashed.done;
      await new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue }).result(
        taskId as TaskId,
      );
      const resumed = claude.spawn(second.url, [...args, '--resume', conversationOf(crashed.stdout())], {
        env: CHANNEL_ENV,
        keepStdinOpen: true,
      });
      resumed.send(userMessage('Go on.'));
      const woken = await second.waitForRequest(carriesChannel);
      expect(lastUserBlocks(woken).map((block) => block.text)).toContainEqual(
        `<channel source="${CHANNEL_SOURCE}" kind="completion" task_id="${taskId}">\n` +
          `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n` +
          '[output]\nlate\n</channel>',
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      resumed.child.stdin?.end();
      await resumed.done;
      expect(second.conversationRequests().filter(carriesChannel)).toHaveLength(1);
      expect(first.conversationRequests().filter(carriesChannel)).toHaveLength(0);
      expect([...first.stepErrors, ...second.stepErrors]).toEqual([]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
