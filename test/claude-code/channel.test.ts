/**
 * The real `claude` binary with `durable-bash mcp --channel` as a channel plugin's server, against
 * the scripted Messages API: a task's end starts a turn of the idle session by itself, its notice
 * arrives once (across a crash of claude and a `--resume` too), and its output reaches the model once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
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
});
