/** `durableBashOptions`: the Agent SDK options it returns, as the built entry point gives them. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

type ClaudeAgentSdkEntry = typeof import('../../src/claude-agent-sdk/index.js');

const built = path.resolve('dist/claude-agent-sdk');
const entry = (): Promise<ClaudeAgentSdkEntry> => import(pathToFileURL(path.join(built, 'index.js')).href);

describe('durableBashOptions', () => {
  it('starts durable-bash mcp with Claude Code’s Bash arguments, aliases Bash to it and allows the readers', async () => {
    const { durableBashOptions } = await entry();
    expect(durableBashOptions({ address: '127.0.0.1:7233', taskQueue: 'agents' })).toEqual({
      mcpServers: {
        'durable-bash': {
          type: 'stdio',
          command: process.execPath,
          args: [
            path.resolve('dist/cli/main.js'),
            'mcp',
            ...['--bash-arguments', 'claude-code'],
            ...['--address', '127.0.0.1:7233', '--task-queue', 'agents'],
          ],
          env: {},
          alwaysLoad: true,
        },
      },
      toolAliases: { Bash: 'mcp__durable-bash__bash' },
      allowedTools: ['mcp__durable-bash__bash_output', 'mcp__durable-bash__bash_list'],
    });
  });

  it('passes every connection option as the CLI flag, and the API key in the environment only', async () => {
    const { durableBashOptions } = await entry();
    const { mcpServers } = durableBashOptions({
      namespace: 'prod',
      profile: 'cloud',
      configFile: '/etc/temporal.toml',
      tls: true,
      tlsCaPath: '/ca.pem',
      tlsCertPath: '/cert.pem',
      tlsKeyPath: '/key.pem',
      tlsServerName: 'temporal.example',
      apiKey: 'secret-key',
      codecKeyFile: '/keys',
      stateDir: '/state',
      autoBackgroundMs: false,
      env: { EXTRA: '1' },
    });
    const server = mcpServers['durable-bash'] as { args: string[]; env: Record<string, string> };
    expect(server.args.slice(4)).toEqual([
      ...['--namespace', 'prod', '--profile', 'cloud', '--config-file', '/etc/temporal.toml', '--tls'],
      ...['--tls-ca-path', '/ca.pem', '--tls-cert-path', '/cert.pem', '--tls-key-path', '/key.pem'],
      ...['--tls-server-name', 'temporal.example', '--codec-key-file', '/keys', '--no-auto-background'],
    ]);
    expect(server.args.join(' ')).not.toContain('secret-key');
    expect(server.env).toEqual({
      TEMPORAL_API_KEY: 'secret-key',
      DURABLE_BASH_STATE_DIR: '/state',
      EXTRA: '1',
    });
    expect(durableBashOptions({ autoBackgroundMs: 90_000 }).mcpServers['durable-bash']).toMatchObject({
      args: [expect.any(String), 'mcp', '--bash-arguments', 'claude-code', '--auto-background', '90000'],
    });
  });

  it('with channels, loads the package’s plugin with its options and names it as the channel', async () => {
    const { durableBashOptions } = await entry();
    const tool = (name: string) => `mcp__plugin_durable-bash_durable-bash__${name}`;
    expect(durableBashOptions({ channels: true, address: '127.0.0.1:7233', taskQueue: 'agents' })).toEqual({
      plugins: [{ type: 'local', path: path.resolve('claude-plugin') }],
      settings: {
        pluginConfigs: {
          'durable-bash@inline': {
            options: {
              address: '127.0.0.1:7233',
              task_queue: 'agents',
              channel: true,
              bash_arguments: 'claude-code',
            },
          },
        },
      },
      extraArgs: { channels: 'plugin:durable-bash@inline' },
      toolAliases: { Bash: tool('bash') },
      allowedTools: [tool('bash_output'), tool('bash_list')],
    });
    const { settings } = durableBashOptions({
      channels: true,
      namespace: 'prod',
      tls: true,
      stateDir: '/state',
      autoBackgroundMs: 90_000,
    });
    expect(settings).toEqual({
      pluginConfigs: {
        'durable-bash@inline': {
          options: {
            namespace: 'prod',
            channel: true,
            bash_arguments: 'claude-code',
            mcp_flags: JSON.stringify(['--tls', '--auto-background', '90000', '--state-dir', '/state']),
          },
        },
      },
    });
    // A plugin's server gets neither: they would have to go on a command line or in settings.
    for (const refused of [{ apiKey: 'secret-key' }, { env: { EXTRA: '1' } }])
      expect(() => durableBashOptions({ channels: true, ...refused })).toThrow(
        "durableBashOptions: with channels, the server is the plugin's, which apiKey and env cannot reach; set TEMPORAL_API_KEY and the rest in query()'s env",
      );
  });

  it('loads no part of the Agent SDK at run time: its types only', () => {
    for (const file of ['index.js', 'durable-bash-options.js'])
      expect(readFileSync(path.join(built, file), 'utf8')).not.toMatch(
        /(?:from\s*|import\s*\(\s*|require\s*\(\s*)['"]@anthropic-ai\/claude-agent-sdk/,
      );
  });
});
