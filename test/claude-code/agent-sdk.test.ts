/**
 * The Claude Agent SDK's `query()` (its own claude binary) against the scripted Messages API, with
 * `durableBashOptions` from the built `durable-bash/claude-agent-sdk` spread into its options: the
 * model's own Bash runs on durable-bash, in the session of its conversation.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Options, query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { builtClaudeAgentSdk } from '../helpers/claude-agent-sdk-entry.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import {
  type ContentBlock,
  type ScriptedStep,
  startScriptedMessagesApi,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

const bash = (input: Record<string, unknown>): ScriptedStep => [{ type: 'tool_use', name: 'Bash', input }];

/** What a tool_result gave the model: its text, and whether it was an error. */
const answerOf = (result: ContentBlock | undefined) => ({
  text:
    typeof result?.content === 'string'
      ? result.content
      : (result?.content ?? []).map((block) => block.text ?? '').join(''),
  isError: result?.is_error === true,
});

describe.skipIf(skipWithoutClaudeCode())('durableBashOptions in the Agent SDK', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-sdk-'));
  });

  /** Runs one conversation to its end; its session id. */
  async function converse(apiUrl: string, prompt: string, extra: Partial<Options> = {}): Promise<string> {
    const { durableBashOptions } = await builtClaudeAgentSdk();
    const durable = durableBashOptions({
      address: suite.env.address,
      taskQueue: suite.worker.taskQueue,
      stateDir,
    });
    let sessionId = '';
    const messages: SDKMessage[] = [];
    for await (const message of query({
      prompt,
      options: {
        ...durable,
        // The user's own choice: bash runs without asking (the options allow only the readers).
        allowedTools: [...durable.allowedTools, 'mcp__durable-bash__bash'],
        cwd: claude.home,
        env: claude.env(apiUrl),
        ...extra,
      },
    })) {
      messages.push(message);
      if (message.type === 'result') sessionId = message.session_id;
    }
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
    return sessionId;
  }

  it("routes the model's Bash to durable-bash: a background task listed in the conversation's session", async () => {
    const api = await startScriptedMessagesApi(
      bash({
        command: 'echo started; sleep 1; echo done',
        description: 'Run a job',
        run_in_background: true,
      }),
      [{ type: 'text', text: 'Started.' }],
    );
    try {
      const conversation = await converse(api.url, 'Start the job in the background.');
      expect(api.stepErrors).toEqual([]);
      const [first, second] = api.conversationRequests();
      // The model sees Claude Code's own Bash, and durable-bash's tools undeferred beside it.
      const tools = new Map((first?.tools ?? []).map((tool) => [tool.name, tool]));
      expect(tools.get('Bash')?.input_schema).toMatchObject({ required: ['command'] });
      const durableBash = tools.get('mcp__durable-bash__bash');
      expect(durableBash?.input_schema).toMatchObject({ required: ['command'] });
      expect(durableBash?.defer_loading).toBeUndefined();
      const answer = answerOf(second && toolResultsOf(second)[0]);
      expect(answer.isError).toBe(false);
      const taskId = answer.text.match(/^started background task (bash-[0-9a-f-]{36})$/)?.[1];
      expect(taskId, answer.text).toBeDefined();
      // The library's own client and bash_list see it in the conversation's session.
      const session = `claude-code:${conversation}`;
      const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
      const listed = await tasks.list({ owner: session });
      expect(listed.map(({ taskId, command, background }) => ({ taskId, command, background }))).toEqual([
        { taskId, command: 'echo started; sleep 1; echo done', background: true },
      ]);
      const list = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }).find(
        (tool) => tool.name === 'bash_list',
      );
      const shown = await list?.execute({ all: true }, { agent: { sessionId: session } });
      expect(shown?.content[0]?.text).toContain(`${taskId}  `);
    } finally {
      await api.close();
    }
  });

  it("answers a foreground Bash call with durable-bash's exact text, and a bad one in one line that starts nothing", async () => {
    const api = await startScriptedMessagesApi(
      bash({ command: 'echo hi; echo oops >&2; exit 3', description: 'Print and fail' }),
      bash({ command: 'echo never', bogus: 1 }),
      bash({ command: 'sleep 700', timeout: 700_000 }),
      bash({ command: 'sleep 1', run_in_background: true, timeout: 7_200_001 }),
      bash({ command: 'echo never', dangerouslyDisableSandbox: true }),
      bash({ description: 'No command' }),
      [{ type: 'text', text: 'Done.' }],
    );
    try {
      const conversation = await converse(api.url, 'Try some commands.');
      expect(api.stepErrors).toEqual([]);
      const answers = api
        .conversationRequests()
        .slice(1)
        .map((request) => answerOf(toolResultsOf(request)[0]));
      expect(answers).toEqual([
        { text: 'hi\n[stderr]\noops\n[exit code: 3]', isError: false },
        { text: 'unknown argument: bogus', isError: true },
        {
          text: 'invalid timeout: 700000 is over 600000 ms, the most a foreground command may take; set run_in_background: true to run longer',
          isError: true,
        },
        {
          text: 'invalid timeout: 7200001 is over 7200000 ms, the most a background command may be given; leave timeout out to run it until it ends',
          isError: true,
        },
        {
          text: "invalid dangerouslyDisableSandbox: not available: every command runs in its session's isolation, which nothing turns off; call again without it",
          isError: true,
        },
        { text: 'invalid command: expected a non-blank string, got nothing', isError: true },
      ]);
      // Only the good call started a workflow.
      const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
      const started = await tasks.list({ owner: `claude-code:${conversation}` });
      expect(started.map(({ command }) => command)).toEqual(['echo hi; echo oops >&2; exit 3']);
    } finally {
      await api.close();
    }
  });

  it('gives a fork a session of its own, which lists none of its parent’s tasks', async () => {
    const first = await startScriptedMessagesApi(
      bash({ command: 'sleep 30', description: 'Wait', run_in_background: true }),
      [{ type: 'text', text: 'Waiting.' }],
    );
    const fork = await startScriptedMessagesApi(
      [{ type: 'tool_use', name: 'mcp__durable-bash__bash_list', input: { all: true } }],
      [{ type: 'text', text: 'Listed.' }],
    );
    try {
      const parent = await converse(first.url, 'Wait in the background.');
      const started = answerOf(
        toolResultsOf(first.conversationRequests()[1] ?? { model: '', messages: [] })[0],
      );
      const taskId = started.text.replace('started background task ', '');
      const forked = await converse(fork.url, 'List your tasks.', { resume: parent, forkSession: true });
      expect(forked).not.toBe(parent);
      expect(
        answerOf(toolResultsOf(fork.conversationRequests()[1] ?? { model: '', messages: [] })[0]),
      ).toEqual({
        text: '(no background tasks)',
        isError: false,
      });
      // Ended here: the task is the parent's, which no longer runs.
      const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
      await tasks.kill(taskId, `claude-code:${parent}`);
    } finally {
      await Promise.all([first.close(), fork.close()]);
    }
  });
});
