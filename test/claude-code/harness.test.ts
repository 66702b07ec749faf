/**
 * The real `claude` binary against the scripted Messages API, with `durable-bash mcp` as an MCP
 * server from `--mcp-config`: what the model's call of durable-bash's tool brings back.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import {
  CLAUDE_CODE_VERSION,
  claudeCodeBinary,
  skipWithoutClaudeCode,
  useClaudeCode,
} from '../helpers/claude-code.js';
import { durableBashMcpConfig } from '../helpers/claude-mcp-config.js';
import { startScriptedMessagesApi, toolResultsOf } from '../helpers/scripted-messages-api.js';

describe.skipIf(skipWithoutClaudeCode())('claude with durable-bash mcp', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-mcp-'));
  });

  /** An `--mcp-config` value that starts `durable-bash mcp` for `session` as the MCP server `durable-bash`. */
  const mcpConfig = (session: string) =>
    durableBashMcpConfig([
      ...['--address', suite.env.address, '--task-queue', suite.worker.taskQueue],
      ...['--session', session, '--state-dir', stateDir],
    ]);

  it('is the version package.json pins', async () => {
    const binary = claudeCodeBinary();
    if ('missing' in binary) throw new Error(binary.missing);
    const api = await startScriptedMessagesApi();
    try {
      const run = await claude.run(api.url, ['--version']);
      expect(run.stdout).toBe(`${CLAUDE_CODE_VERSION} (Claude Code)\n`);
    } finally {
      await api.close();
    }
  });

  it("hands the model durable-bash's exact answer to its call of mcp__durable-bash__bash", async () => {
    const input = { command: 'echo hi', description: 'Say hi' };
    const api = await startScriptedMessagesApi(
      [{ type: 'tool_use', name: 'mcp__durable-bash__bash', input }],
      [{ type: 'text', text: 'It printed hi.' }],
    );
    try {
      const run = await claude.run(api.url, [
        '-p',
        'Say hi with durable-bash.',
        ...['--mcp-config', mcpConfig(`claude-harness-${randomUUID()}`), '--strict-mcp-config'],
        ...['--allowedTools', 'mcp__durable-bash__bash', '--output-format', 'json'],
      ]);
      expect(api.stepErrors).toEqual([]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toMatchObject({ is_error: false, result: 'It printed hi.' });
      // What the library's own bash answers to the same call, block for block.
      const [bash] = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
      const expected = await bash?.execute(input, { agent: { sessionId: `library-${randomUUID()}` } });
      expect(expected).toEqual({ content: [{ type: 'text', text: 'hi\n' }] });
      const [, answer] = api.conversationRequests();
      const results = answer === undefined ? [] : toolResultsOf(answer);
      expect(results.map(({ type, content, is_error }) => ({ type, content, is_error }))).toEqual([
        { type: 'tool_result', content: expected?.content, is_error: undefined },
      ]);
      expect(api.stepsLeft()).toBe(0);
    } finally {
      await api.close();
    }
  });

  it('runs a call made after --resume in a new process, with an API of its own', async () => {
    const session = `claude-harness-${randomUUID()}`;
    const flags = [
      ...['--mcp-config', mcpConfig(session), '--strict-mcp-config'],
      ...['--allowedTools', 'mcp__durable-bash__bash', '--output-format', 'json'],
    ];
    const call = (command: string) => [
      {
        type: 'tool_use' as const,
        name: 'mcp__durable-bash__bash',
        input: { command, description: 'Print' },
      },
    ];
    const first = await startScriptedMessagesApi(call('echo one'), [{ type: 'text', text: 'One.' }]);
    const second = await startScriptedMessagesApi(call('echo two'), [{ type: 'text', text: 'Two.' }]);
    try {
      const run = await claude.run(first.url, ['-p', 'Print one.', ...flags]);
      const { session_id: conversation } = JSON.parse(run.stdout) as { session_id: string };
      await claude.run(second.url, ['-p', 'Print two.', '--resume', conversation, ...flags]);
      const answer = second.conversationRequests()[1];
      expect(answer && toolResultsOf(answer).map(({ content }) => content)).toEqual([
        [{ type: 'text', text: 'two\n' }],
      ]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
