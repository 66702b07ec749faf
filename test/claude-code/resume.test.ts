/**
 * The real `claude` binary with `durable-bash mcp --bash-arguments claude-code` from `--mcp-config`
 * and no session named: the server's session is the conversation's (CLAUDE_CODE_SESSION_ID), so a
 * background task outlives a SIGKILL of claude and comes back with `--resume`, and only there.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import { durableBashMcpConfig } from '../helpers/claude-mcp-config.js';
import {
  type ContentBlock,
  type MessagesRequest,
  type ScriptedBlock,
  startScriptedMessagesApi,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

const call = (tool: string, input: Record<string, unknown>): ScriptedBlock[] => [
  { type: 'tool_use', name: `mcp__durable-bash__${tool}`, input },
];

/** The text blocks of a request's tool result: a notice may come first, the tool's answer is last. */
const blocksOf = (request: MessagesRequest | undefined): string[] => {
  const content = (request && toolResultsOf(request)[0]?.content) as string | ContentBlock[] | undefined;
  if (content === undefined) return [];
  return typeof content === 'string' ? [content] : content.map((block) => block.text ?? '');
};

describe.skipIf(skipWithoutClaudeCode())('a Claude Code conversation as a durable-bash session', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-resume-'));
  });

  /** Flags that start `durable-bash mcp` with Claude Code's Bash arguments and no session of its own. */
  const flags = () => [
    '--mcp-config',
    durableBashMcpConfig(
      [
        ...['--bash-arguments', 'claude-code'],
        ...['--address', suite.env.address, '--task-queue', suite.worker.taskQueue],
        ...['--state-dir', stateDir],
      ],
      { alwaysLoad: true },
    ),
    '--strict-mcp-config',
    ...[
      '--allowedTools',
      'mcp__durable-bash__bash,mcp__durable-bash__bash_output,mcp__durable-bash__bash_list',
    ],
    ...['--allowedTools', 'mcp__durable-bash__bash_kill', '--output-format', 'json'],
  ];

  it('lists, reads and kills its tasks after claude was SIGKILLed and the conversation resumed; another conversation cannot', async () => {
    const conversation = randomUUID();
    const command = 'echo tick 1; sleep 1; echo tick 2; sleep 4; exit 7';
    let started: (answers: string[]) => void = () => undefined;
    const startAnswers = new Promise<string[]>((resolve) => {
      started = resolve;
    });
    let firstAnswer = '';
    const first = await startScriptedMessagesApi(
      call('bash', { command, description: 'Tick and fail', run_in_background: true }),
      (request) => {
        firstAnswer = blocksOf(request).join('');
        return call('bash', { command: 'sleep 300', run_in_background: true });
      },
      async (request) => {
        started([firstAnswer, blocksOf(request).join('')]);
        // The turn goes on no further: claude is killed while it waits here.
        await new Promise(() => undefined);
        return [];
      },
    );
    const crashed = claude.spawn(first.url, [
      '-p',
      'Start the jobs.',
      '--session-id',
      conversation,
      ...flags(),
    ]);
    const answers = await startAnswers;
    const [taskId = '', sleeper = ''] = answers.map((answer) =>
      answer.replace('started background task ', ''),
    );
    expect(answers).toEqual([`started background task ${taskId}`, `started background task ${sleeper}`]);
    crashed.crash();
    expect((await crashed.done).signal).toBe('SIGKILL');

    // Another conversation neither lists nor kills it, while it runs.
    const other = await startScriptedMessagesApi(
      call('bash_list', { all: true }),
      call('bash_kill', { task_id: sleeper }),
      [{ type: 'text', text: 'Not mine.' }],
    );
    // The conversation resumed in a new process, once the task has ended.
    const resumed = await startScriptedMessagesApi(
      call('bash_list', { all: true }),
      call('bash_output', { task_id: taskId }),
      call('bash_kill', { task_id: sleeper }),
      [{ type: 'text', text: 'It failed with 7.' }],
    );
    try {
      const strangers = await claude.run(other.url, ['-p', 'List tasks.', ...flags()]);
      expect(strangers.code).toBe(0);
      const [, listed, killed] = other.conversationRequests();
      expect(blocksOf(listed)).toEqual(['(no background tasks)']);
      expect(killed && toolResultsOf(killed)[0]).toMatchObject({
        content: `task ${sleeper} belongs to another session`,
        is_error: true,
      });

      await suite.env.client.workflow.getHandle(taskId).result();
      const run = await claude.run(resumed.url, [
        '-p',
        'Check the job.',
        '--resume',
        conversation,
        ...flags(),
      ]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toMatchObject({ session_id: conversation, result: 'It failed with 7.' });
      const [, list, output, kill] = resumed.conversationRequests();
      expect(blocksOf(list).at(-1)).toMatch(
        new RegExp(
          `^ID +STATUS +AGE +COMMAND\\n${sleeper}  running +\\d+s +sleep 300\\n${taskId}  completed +\\d+s +${command.replace(/[;.]/g, '\\$&')}$`,
        ),
      );
      // The notice that waited for the session comes once, atop the resumed conversation's first
      // result, with the task's whole output: that was its read, so bash_output shows no line again.
      const notice = `background bash task ${taskId} finished [status: completed, exit code: 7]. Read its output with bash_output.\n[output]\ntick 1\ntick 2`;
      expect(blocksOf(list)[0]).toBe(notice);
      expect(
        [list, output, kill]
          .flatMap((request) => blocksOf(request))
          .filter((block) => block.includes('[output]')),
      ).toEqual([notice]);
      expect(blocksOf(output)).toEqual(['(no new output)\n[status: completed, exit code: 7]']);
      expect(blocksOf(kill).at(-1)).toBe(`killed background task ${sleeper}`);
    } finally {
      await Promise.all([first.close(), other.close(), resumed.close()]);
    }
  });
});
