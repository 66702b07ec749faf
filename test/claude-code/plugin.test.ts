/**
 * The Claude Code plugin in claude-plugin/, with the real `claude` binary against the scripted
 * Messages API: loaded with `--plugin-dir`, and installed offline from the repository's marketplace
 * file into the test's own home (Claude Code copies the plugin folder alone into its cache, so the
 * server is then found on PATH).
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { CHANNEL_ENV, SHIPPED_CHANNEL_SOURCE, seedChannels, userMessage } from '../helpers/claude-channel.js';
import { skipWithoutClaudeCode, useClaudeCode } from '../helpers/claude-code.js';
import { CLI_BIN } from '../helpers/cli.js';
import {
  lastUserMessage,
  type MessagesRequest,
  startScriptedMessagesApi,
  textOfContent,
  toolResultsOf,
} from '../helpers/scripted-messages-api.js';

/** The plugin's tool names: `mcp__plugin_<plugin>_<server>__<tool>`. */
const pluginTool = (tool: string) => `mcp__plugin_durable-bash_durable-bash__${tool}`;
const PLUGIN_BASH = pluginTool('bash');

/** The `source` of the plugin server's channel messages. */

const PLUGIN_DIR = path.resolve('claude-plugin');

describe.skipIf(skipWithoutClaudeCode())('the durable-bash plugin for Claude Code', () => {
  const suite = useDevServerWithWorker();
  const claude = useClaudeCode();
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-plugin-'));
  });

  /** Settings that give the plugin `plugin` its options: the test's server and task queue. */
  const settings = (plugin: string, more: Record<string, unknown> = {}) =>
    JSON.stringify({
      pluginConfigs: {
        [plugin]: { options: { address: suite.env.address, task_queue: suite.worker.taskQueue, ...more } },
      },
    });

  /** Has the model call the plugin's bash once; what came back, and how claude ended. */
  async function callPluginBash(args: string[], env: NodeJS.ProcessEnv = {}) {
    const api = await startScriptedMessagesApi(
      [{ type: 'tool_use', name: PLUGIN_BASH, input: { command: 'echo hi', description: 'Say hi' } }],
      [{ type: 'text', text: 'It printed hi.' }],
    );
    try {
      const run = await claude.run(
        api.url,
        ['-p', 'Say hi.', '--allowedTools', PLUGIN_BASH, '--output-format', 'json', ...args],
        { env: { DURABLE_BASH_STATE_DIR: stateDir, ...env } },
      );
      const [first, answer] = api.conversationRequests();
      return {
        run,
        tools: (first?.tools ?? []).map(({ name }) => name),
        results: answer === undefined ? [] : toolResultsOf(answer),
      };
    } finally {
      await api.close();
    }
  }

  it("runs a command through --plugin-dir and answers durable-bash's exact text", async () => {
    const { run, tools, results } = await callPluginBash([
      ...['--plugin-dir', PLUGIN_DIR],
      ...['--settings', settings('durable-bash@inline')],
    ]);
    // Always loaded, as the plugin asks: no deferred-tool hint after a call's error line.
    expect(tools).toContain(PLUGIN_BASH);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(results.map(({ content, is_error }) => ({ content, is_error }))).toEqual([
      { content: [{ type: 'text', text: 'hi\n' }], is_error: undefined },
    ]);
    // In the session of the conversation.
    const { session_id: conversation } = JSON.parse(run.stdout) as { session_id: string };
    const tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
    const runs = await tasks.list({ owner: `claude-code:${conversation}` });
    expect(runs.map(({ command }) => command)).toEqual(['echo hi']);
  });

  it("with its channel option on, starts a turn of the idle session with a task's completion notice", async () => {
    seedChannels(claude.home, 'durable-bash');
    let taskId = '';
    const carriesChannel = (request: MessagesRequest) =>
      textOfContent(lastUserMessage(request)?.content).includes(
        `<channel source="${SHIPPED_CHANNEL_SOURCE}"`,
      );
    const api = await startScriptedMessagesApi(
      [
        {
          type: 'tool_use',
          name: PLUGIN_BASH,
          input: { command: 'sleep 2; echo tick', description: 'Tick', run_in_background: true },
        },
      ],
      (request) => {
        const text = textOfContent(toolResultsOf(request)[0]?.content);
        taskId = /^started background task (bash-[A-Za-z0-9-]+)/.exec(text)?.[1] ?? text;
        return [{ type: 'text', text: 'Started.' }];
      },
      [{ type: 'text', text: 'Noted.' }],
    );
    try {
      const session = claude.spawn(
        api.url,
        [
          ...['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose'],
          ...['--plugin-dir', PLUGIN_DIR, '--channels', 'plugin:durable-bash@inline'],
          ...['--settings', settings('durable-bash@inline', { channel: true })],
          ...['--allowedTools', PLUGIN_BASH],
        ],
        { env: { ...CHANNEL_ENV, DURABLE_BASH_STATE_DIR: stateDir }, keepStdinOpen: true },
      );
      session.send(userMessage('Start it.'));
      const woken = await api.waitForRequest(carriesChannel);
      expect(textOfContent(lastUserMessage(woken)?.content)).toContain(
        `<channel source="${SHIPPED_CHANNEL_SOURCE}" kind="completion" task_id="${taskId}">\n` +
          `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n` +
          '[output]\ntick\n</channel>',
      );
      session.child.stdin?.end();
      await session.done;
      expect(api.conversationRequests().filter(carriesChannel)).toHaveLength(1);
      expect(api.stepErrors).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('installs offline from the marketplace file, and runs durable-bash from PATH', async () => {
    const env = { HOME: claude.home, PATH: process.env.PATH };
    const cli = (...args: string[]) =>
      claude.run('http://127.0.0.1:9', ['plugin', ...args], { env, cwd: claude.home });
    const added = await cli('marketplace', 'add', path.resolve('.'));
    expect(added.stdout).toContain('Successfully added marketplace: durable-bash');
    const installed = await cli('install', 'durable-bash@durable-bash');
    expect(installed.stdout).toContain('Successfully installed plugin: durable-bash@durable-bash');

    // The copy in the cache holds the plugin folder alone: with no durable-bash on PATH, its
    // launcher says so in one line.
    const cached = path.join(claude.home, '.claude/plugins/cache/durable-bash/durable-bash');
    const [version = ''] = readdirSync(cached);
    const launcher = path.join(cached, version, 'launch.mjs');
    const alone = spawnSync(process.execPath, [launcher], { encoding: 'utf8', env: { PATH: '' } });
    expect({ status: alone.status, stderr: alone.stderr }).toEqual({
      status: 1,
      stderr: `durable-bash plugin: cannot find durable-bash: no ${path.join(cached, 'dist/cli/main.js')} (the package this plugin came in) and no durable-bash on PATH; install it (npm install -g durable-bash) or load the plugin from the installed package\n`,
    });

    // A durable-bash on PATH, as `npm install -g durable-bash` links it.
    const bin = path.join(claude.home, 'bin');
    mkdirSync(bin);
    symlinkSync(CLI_BIN, path.join(bin, 'durable-bash'));
    const { run, results } = await callPluginBash(['--settings', settings('durable-bash@durable-bash')], {
      PATH: `${bin}${path.delimiter}${process.env.PATH}`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(results.map(({ content }) => content)).toEqual([[{ type: 'text', text: 'hi\n' }]]);
  });
});

describe('the plugin folder', () => {
  it('passes mcp_flags on to durable-bash mcp, and refuses them in one line when they are not a JSON array of strings', () => {
    const launch = (flags: string) =>
      spawnSync(process.execPath, [path.join(PLUGIN_DIR, 'launch.mjs')], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, DURABLE_BASH_PLUGIN_MCP_FLAGS: flags },
      });
    const unknown = launch('["--no-such-flag"]');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^error: unknown option '--no-such-flag'\n/);
    expect(launch('{"tls":true}')).toMatchObject({
      status: 1,
      stderr: 'durable-bash plugin: mcp_flags is not a JSON array of strings: {"tls":true}\n',
    });
  });

  it("carries the package's version, and the marketplace file lists it", () => {
    const read = (file: string) => JSON.parse(readFileSync(path.resolve(file), 'utf8'));
    expect(read('claude-plugin/.claude-plugin/plugin.json').version).toBe(read('package.json').version);
    expect(read('.claude-plugin/marketplace.json').plugins).toEqual([
      expect.objectContaining({ name: 'durable-bash', source: './claude-plugin' }),
    ]);
    expect(read('package.json').files).toContain('claude-plugin');
  });
});
