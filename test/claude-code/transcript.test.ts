/**
 * The real session of docs/CLAUDE-CODE.md ("A real session"), as a test: the Agent SDK's streaming
 * `query()` with `durableBashOptions({ channels: true })` against the scripted Messages API, the
 * claude process SIGKILLed mid-turn, the conversation resumed in a new process, and the task's
 * notice arriving there once as a channel message. With DURABLE_BASH_TRANSCRIPT=<file> it writes
 * the transcript the doc shows:
 *
 *   npm run build && DURABLE_BASH_TRANSCRIPT=/tmp/transcript.txt npx vitest run test/claude-code/transcript.test.ts
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Options, query, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import type { TaskId } from '../../src/shared/task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { builtClaudeAgentSdk } from '../helpers/claude-agent-sdk-entry.js';
import { CHANNEL_ENV, SHIPPED_CHANNEL_SOURCE, seedChannels } from '../helpers/claude-channel.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import {
  type ContentBlock,
  lastUserMessage,
  type MessagesRequest,
  type ScriptedBlock,
  startScriptedMessagesApi,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

/** The user text blocks of a request's last user message, Claude Code's reminders left out. */
function userTexts(request: MessagesRequest): string[] {
  const content = lastUserMessage(request)?.content;
  const blocks: ContentBlock[] =
    typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? []);
  return blocks
    .filter((block) => block.type === 'text' && !(block.text ?? '').startsWith('<system-reminder>'))
    .map((block) => block.text ?? '');
}

const channelOf = (request: MessagesRequest) =>
  userTexts(request).find((text) => text.startsWith(`<channel source="${SHIPPED_CHANNEL_SOURCE}"`));

/** A tool result's text blocks, `---` between them. */
function resultText(request: MessagesRequest): string {
  const content = toolResultsOf(request)[0]?.content;
  if (content === undefined) return '(no tool result)';
  return typeof content === 'string' ? content : content.map((block) => block.text ?? '').join('\n---\n');
}

const indent = (text: string) => text.replace(/\n/g, '\n   ');

/** The claude processes this process started (the SDK's children), by pid. */
function claudeChildren(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((name) => {
      try {
        const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
        const [program = ''] = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
        return ppid === process.pid && path.basename(program) === 'claude';
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(skipWithoutClaudeCode())('the real session of docs/CLAUDE-CODE.md', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();

  it('runs the task across a SIGKILL of claude, and its notice wakes the resumed conversation once', async () => {
    const { durableBashOptions, durableBashPluginTool } = await builtClaudeAgentSdk();
    seedChannels(claude.home, 'durable-bash');
    const log: string[] = [];
    const durable = durableBashOptions({
      channels: true,
      address: suite.env.address,
      taskQueue: suite.worker.taskQueue,
      stateDir: mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-transcript-')),
    });
    const options = (apiUrl: string): Options => ({
      ...durable,
      allowedTools: [...durable.allowedTools, durableBashPluginTool('bash')],
      cwd: claude.home,
      env: { ...claude.env(apiUrl), ...CHANNEL_ENV },
    });
    /** A streaming input: one user message, then open until `end()`. */
    function input(text: string) {
      let end = () => {};
      const ended = new Promise<void>((resolve) => {
        end = resolve;
      });
      async function* messages(): AsyncGenerator<SDKUserMessage> {
        log.push(`user: ${text}`, '');
        yield {
          type: 'user',
          message: { role: 'user', content: text },
          parent_tool_use_id: null,
          session_id: '',
        };
        await ended;
      }
      return { messages: messages(), end };
    }
    /** The model's call: logged, with what came back in the next request. */
    const call = (name: string, input: Record<string, unknown>): ScriptedBlock[] => {
      log.push(`-> ${name} ${JSON.stringify(input)}`);
      return [{ type: 'tool_use', name, input }];
    };
    const answered = (request: MessagesRequest) => log.push(`<- ${indent(resultText(request))}`, '');
    const say = (text: string): ScriptedBlock[] => {
      log.push(`model: ${text}`, '');
      return [{ type: 'text', text }];
    };

    const command = 'for i in 1 2 3; do echo "step $i"; sleep 1; done; exit 3';
    let taskId = '';
    let killNow = () => {};
    const atKill = new Promise<void>((resolve) => {
      killNow = resolve;
    });
    const first = await startScriptedMessagesApi(
      () => call('Bash', { command, description: 'Run three steps', run_in_background: true }),
      (request) => {
        answered(request);
        taskId = resultText(request).replace('started background task ', '');
        return call('Bash', { command: 'echo hello; echo oops >&2; exit 2', description: 'Print and fail' });
      },
      async (request) => {
        answered(request);
        killNow();
        await new Promise(() => undefined); // the turn goes no further: claude is killed here
        return [];
      },
    );
    const second = await startScriptedMessagesApi(
      () => say('The task is still listed; I will wait for its notice.'),
      (request) => {
        const channel = channelOf(request);
        log.push(
          '(idle; the notice that fell due while no claude ran comes as a channel message and starts a turn, with no user message:)',
          `${channel}`,
          '',
        );
        return call(durableBashPluginTool('bash_output'), { task_id: taskId });
      },
      (request) => {
        answered(request);
        return call(durableBashPluginTool('bash_list'), { all: true });
      },
      (request) => {
        answered(request);
        return say('It printed three steps and failed with exit code 3.');
      },
    );
    try {
      let conversation = '';
      const crashed = input('Run the three steps in the background, then print something.');
      const firstRun = (async () => {
        try {
          for await (const message of query({ prompt: crashed.messages, options: options(first.url) }))
            if (message.type === 'system' && conversation === '') conversation = message.session_id;
        } catch {
          // claude was killed
        }
      })();
      await atKill;
      const pids = claudeChildren();
      expect(pids).toHaveLength(1);
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      log.push(
        '(the claude process is SIGKILLed mid-turn; its MCP server goes with it. The task runs on.)',
        '',
      );
      crashed.end();
      await firstRun;
      const ended = await new BashTasks({
        client: suite.env.client,
        taskQueue: suite.worker.taskQueue,
      }).result(taskId as TaskId);
      expect(ended).toBeDefined();
      log.push(
        `(the task ends while no claude runs; resumed in a new process with resume: ${conversation.slice(0, 8)}-...)`,
        '',
      );

      const resumed = input('Go on.');
      let results = 0;
      for await (const message of query({
        prompt: resumed.messages,
        options: { ...options(second.url), resume: conversation },
      })) {
        if (message.type === 'result' && ++results === 2) resumed.end();
      }
      expect([...first.stepErrors, ...second.stepErrors]).toEqual([]);
      const requests = second.conversationRequests();
      const notices = requests.filter((request) => channelOf(request) !== undefined);
      expect(notices).toHaveLength(1);
      expect(channelOf(notices[0] as MessagesRequest)).toBe(
        `<channel source="${SHIPPED_CHANNEL_SOURCE}" kind="completion" task_id="${taskId}">\n` +
          `background bash task ${taskId} finished [status: completed, exit code: 3]. Read its output with bash_output.\n` +
          '[output]\nstep 1\nstep 2\nstep 3\n</channel>',
      );
      expect(resultText(requests[2] as MessagesRequest)).toBe(
        '(no new output)\n[status: completed, exit code: 3]',
      );
      // The output reached the model once: in the notice, in no tool result.
      expect(
        [...first.conversationRequests(), ...requests]
          .map(resultText)
          .filter((text) => text.includes('step 1')),
      ).toEqual([]);
      const file = process.env.DURABLE_BASH_TRANSCRIPT;
      if (file !== undefined && file !== '')
        writeFileSync(
          file,
          `(conversation ${conversation}: the Agent SDK's query(), options from durableBashOptions({ channels: true }))\n\n${log.join('\n')}`,
        );
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
