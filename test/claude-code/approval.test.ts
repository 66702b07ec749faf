/**
 * The real `claude` binary with `durable-bash mcp --ask <rule>`, against the scripted Messages API:
 * a durable approval request reaches the person at the keyboard through Claude Code's own prompt
 * (MCP elicitation, answered here by an `Elicitation` hook, as a plugin or the user's settings can
 * ship it), and is recorded as decided by `claude-code:<conversation>`. The request outlives the
 * claude process: the CLI decides it meanwhile, and the resumed conversation hears the outcome once.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Approvals } from '../../src/client/approvals.js';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import { durableBashMcpConfig } from '../helpers/claude-mcp-config.js';
import { cli } from '../helpers/cli.js';
import {
  type MessagesRequest,
  type ScriptedStep,
  startScriptedMessagesApi,
  textOfContent,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

const ASK_RULE = 'echo deploy';

/** The text of every tool result of a request's last user message, one a line. */
const resultText = (request: MessagesRequest) =>
  toolResultsOf(request)
    .map((result) => textOfContent(result.content))
    .join('\n');

describe.skipIf(skipWithoutClaudeCode())('claude with durable-bash mcp --ask', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-approval-'));
  });

  const server = () => ['--address', suite.env.address, '--task-queue', suite.worker.taskQueue];

  /** An `--mcp-config` value that starts `durable-bash mcp --ask ASK_RULE` for `session`. */
  const mcpConfig = (session: string) =>
    durableBashMcpConfig([
      ...['--ask', ASK_RULE, '--session', session, '--state-dir', stateDir],
      ...server(),
    ]);

  const flags = (session: string) => [
    ...['--mcp-config', mcpConfig(session), '--strict-mcp-config'],
    ...['--allowedTools', 'mcp__durable-bash__bash,mcp__durable-bash__bash_list'],
    ...['--output-format', 'json'],
  ];

  const deploy = (command: string, background = false): ScriptedStep => [
    {
      type: 'tool_use',
      name: 'mcp__durable-bash__bash',
      input: { command, description: 'Deploy', ...(background ? { run_in_background: true } : {}) },
    },
  ];

  it("shows the request in Claude Code's prompt and records the decision made there as claude-code:<conversation>", async () => {
    // The Elicitation hook: keeps what Claude Code asked it, and allows.
    const asked = path.join(claude.home, 'elicitation.json');
    const hook = path.join(claude.home, 'allow.sh');
    writeFileSync(
      hook,
      `#!/bin/sh\ncat > '${asked}'\necho '{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{"decision":"allow"}}}'\n`,
    );
    chmodSync(hook, 0o755);
    const settings = { hooks: { Elicitation: [{ hooks: [{ type: 'command', command: hook }] }] } };
    const api = await startScriptedMessagesApi(deploy('echo deploy now'), [
      { type: 'text', text: 'Deployed.' },
    ]);
    try {
      const run = await claude.run(api.url, [
        ...['-p', 'Deploy.', ...flags(`claude-approval-${randomUUID()}`)],
        ...['--settings', JSON.stringify(settings)],
      ]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      const { session_id: conversation } = JSON.parse(run.stdout) as { session_id: string };
      const [, answer] = api.conversationRequests();
      expect(answer && resultText(answer)).toBe('deploy now\n');
      // Claude Code put durable-bash's form before the person: the command, and why it asks.
      const question = JSON.parse(readFileSync(asked, 'utf8')) as Record<string, unknown>;
      expect(question).toMatchObject({
        hook_event_name: 'Elicitation',
        mcp_server_name: 'durable-bash',
        mode: 'form',
        session_id: conversation,
      });
      const message = String(question.message);
      expect(message).toMatch(
        /^Run this command\? \(approval approval-[0-9a-f-]{36}\)\n\necho deploy now\n\nin .+\n\nThe policy asks because: `echo deploy now` matches the ask rule `echo deploy`$/,
      );
      const approvalId = /\(approval (approval-[0-9a-f-]{36})\)/.exec(message)?.[1] ?? '';
      const shown = await cli(['approvals', 'show', approvalId, ...server()]);
      expect(shown.stdout).toMatch(new RegExp(`^status {4}approved by claude-code:${conversation}`, 'm'));
    } finally {
      await api.close();
    }
  });

  it('lets the CLI decide a request whose claude was killed, and the resumed conversation hears the outcome once', async () => {
    const session = `claude-approval-${randomUUID()}`;
    const conversation = randomUUID();
    // A background call: it answers `waiting for approval: <id>` at once, and the session hears the
    // outcome by notice. No hook: `-p` dismisses the form, and the request stays open. The model's
    // next answer never comes: claude is killed while it waits for it.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = await startScriptedMessagesApi(deploy('echo deploy later', true), async () => {
      await held;
      return [{ type: 'text', text: 'Never seen.' }];
    });
    const approvals = new Approvals({
      tasks: new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue }),
    });
    const listed = async () => approvals.list(session, 10);
    let approvalId = '';
    try {
      const waiting = claude.spawn(first.url, [
        ...['-p', 'Deploy.', '--session-id', conversation, ...flags(session)],
      ]);
      await first.waitForRequest((request) => resultText(request).startsWith('waiting for approval'));
      approvalId = (await listed())[0]?.approvalId ?? '';
      waiting.crash();
      await waiting.done;
    } finally {
      release();
      await first.close();
    }
    const decided = await cli(['approve', approvalId, '--by', 'cli-test', ...server()]);
    expect(decided).toMatchObject({ code: 0, stdout: `approved ${approvalId}\n` });
    // The resumed conversation lists its tasks until the outcome has come, atop a tool result.
    const outcome = `approval ${approvalId} granted by cli-test`;
    const listUntilHeard: ScriptedStep = async (request) => {
      if (resultText(request).includes(outcome)) return [{ type: 'text', text: 'Heard.' }];
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return [{ type: 'tool_use', name: 'mcp__durable-bash__bash_list', input: {} }];
    };
    const second = await startScriptedMessagesApi(...Array.from({ length: 10 }, () => listUntilHeard));
    try {
      const run = await claude.run(second.url, [
        ...['-p', 'Go on.', '--resume', conversation, ...flags(session)],
      ]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toMatchObject({ result: 'Heard.' });
      const heard = second
        .conversationRequests()
        .map(resultText)
        .filter((text) => text.includes(outcome));
      expect(heard).toHaveLength(1);
      expect(heard[0]).toMatch(
        new RegExp(
          `^${outcome}: \`echo deploy later\` started as background task bash-[0-9a-f-]{36}\\. Read its output with bash_output\\.$`,
          'm',
        ),
      );
    } finally {
      await second.close();
    }
  });
});
