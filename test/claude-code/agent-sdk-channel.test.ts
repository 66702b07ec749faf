/**
 * The Claude Agent SDK's streaming `query()` with `durableBashOptions({ channels: true })` from the
 * built `durable-bash/claude-agent-sdk`, against the scripted Messages API: the model's own Bash runs
 * on the package's plugin, and a background task's end starts a turn of the idle session by itself,
 * its output shown once.
 */

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { query, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { builtClaudeAgentSdk } from '../helpers/claude-agent-sdk-entry.js';
import { CHANNEL_ENV, SHIPPED_CHANNEL_SOURCE, seedChannels } from '../helpers/claude-channel.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import {
  lastUserMessage,
  type MessagesRequest,
  startScriptedMessagesApi,
  textOfContent,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

const carriesChannel = (request: MessagesRequest) =>
  textOfContent(lastUserMessage(request)?.content).includes(`<channel source="${SHIPPED_CHANNEL_SOURCE}"`);

describe.skipIf(skipWithoutClaudeCode())('durableBashOptions({ channels: true }) in the Agent SDK', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();

  it("starts a turn of the idle session with a task's completion notice, and bash_output does not repeat its output", async () => {
    const { durableBashOptions, durableBashPluginTool } = await builtClaudeAgentSdk();
    seedChannels(claude.home, 'durable-bash');
    let taskId = '';
    const api = await startScriptedMessagesApi(
      [
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: 'sleep 2; echo tick', description: 'Tick', run_in_background: true },
        },
      ],
      (request) => {
        const text = textOfContent(toolResultsOf(request)[0]?.content);
        taskId = /^started background task (bash-[0-9a-f-]{36})$/.exec(text)?.[1] ?? text;
        return [{ type: 'text', text: 'Started.' }];
      },
      () => [{ type: 'tool_use', name: durableBashPluginTool('bash_output'), input: { task_id: taskId } }],
      [{ type: 'text', text: 'Read.' }],
    );
    try {
      const durable = durableBashOptions({
        channels: true,
        address: suite.env.address,
        taskQueue: suite.worker.taskQueue,
        stateDir: mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-sdk-channel-')),
      });
      // One user message, then the input stays open: the session idles until the input ends.
      let endInput = () => {};
      const inputEnded = new Promise<void>((resolve) => {
        endInput = resolve;
      });
      async function* input(): AsyncGenerator<SDKUserMessage> {
        yield {
          type: 'user',
          message: { role: 'user', content: 'Start it in the background.' },
          parent_tool_use_id: null,
          session_id: '',
        };
        await inputEnded;
      }
      const messages: SDKMessage[] = [];
      for await (const message of query({
        prompt: input(),
        options: {
          ...durable,
          allowedTools: [...durable.allowedTools, durableBashPluginTool('bash')],
          cwd: claude.home,
          env: { ...claude.env(api.url), ...CHANNEL_ENV },
        },
      })) {
        messages.push(message);
        if (messages.filter(({ type }) => type === 'result').length === 2) endInput();
      }
      expect(api.stepErrors).toEqual([]);
      // Two turns, the second with no user message sent: the channel message started it.
      expect(messages.filter(({ type }) => type === 'result')).toHaveLength(2);
      const requests = api.conversationRequests();
      // The plugin's bash takes Claude Code's Bash arguments (its option bash_arguments: claude-code).
      const pluginBash = requests[0]?.tools?.find(({ name }) => name === durableBashPluginTool('bash'));
      expect(pluginBash?.input_schema).toMatchObject({
        properties: { timeout: expect.anything(), run_in_background: expect.anything() },
      });
      const woken = requests.filter(carriesChannel);
      expect(woken).toHaveLength(1);
      expect(requests.indexOf(woken[0] as MessagesRequest)).toBe(2);
      const texts = textOfContent(lastUserMessage(woken[0] as MessagesRequest)?.content);
      expect(texts).toContain(
        `<channel source="${SHIPPED_CHANNEL_SOURCE}" kind="completion" task_id="${taskId}">\n` +
          `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n` +
          '[output]\ntick\n</channel>',
      );
      // The notice showed the output: the read does not show it again.
      expect(textOfContent(toolResultsOf(requests[3] as MessagesRequest)[0]?.content)).toBe(
        '(no new output)\n[status: completed, exit code: 0]',
      );
    } finally {
      await api.close();
    }
  });
});
