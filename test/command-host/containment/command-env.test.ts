import { describe, expect, it } from 'vitest';
import { commandEnv, taskEnv } from '../../../src/command-host/containment/command-env.js';
import { NON_INTERACTIVE_ENV } from '../../../src/command-host/containment/non-interactive-env.js';

const worker = {
  PATH: '/usr/bin',
  HOME: '/root',
  LC_ALL: 'C',
  TEMPORAL_API_KEY: 'k',
  TEMPORAL_TLS_CLIENT_KEY_PATH: '/keys/client.key',
  DURABLE_BASH_CODEC_KEYS: 'a=AAAA',
  DURABLE_BASH_CODEC_KEY_FILE: '/keys/codec',
  DURABLE_BASH_CODEC_SERVER_TOKEN: 't',
  DURABLE_BASH_MCP_TOKEN: 'm',
  DEPLOY_TOKEN: 'secret',
};

describe("a command's environment", () => {
  it("is the worker's, less its credentials (Temporal's, the codec's, the MCP server's token) and the configured secrets", () => {
    expect(Object.keys(commandEnv(['DEPLOY_TOKEN'], undefined, worker)).sort()).toEqual([
      'HOME',
      'LC_ALL',
      'PATH',
    ]);
  });

  it('with an allowlist, holds only the listed names and prefixes, and still never a credential', () => {
    const env = commandEnv([], ['PATH', 'LC_*', 'TEMPORAL_*', 'DURABLE_BASH_*'], worker);
    expect(Object.keys(env).sort()).toEqual(['LC_ALL', 'PATH']);
  });

  it("adds the non-interactive defaults under the worker's own variables, which win, whatever the allowlist", () => {
    const config = { secretEnv: ['DEPLOY_TOKEN'], envAllowlist: undefined, nonInteractiveDefaults: true };
    expect(taskEnv(config, worker)).toEqual({
      ...NON_INTERACTIVE_ENV,
      PATH: '/usr/bin',
      HOME: '/root',
      LC_ALL: 'C',
    });
    expect(taskEnv(config, { ...worker, PAGER: 'less' }).PAGER).toBe('less');
    expect(taskEnv({ ...config, envAllowlist: ['PATH'] }, worker)).toEqual({
      ...NON_INTERACTIVE_ENV,
      PATH: '/usr/bin',
    });
  });

  it('leaves the defaults out when the worker is told to', () => {
    const config = { secretEnv: ['DEPLOY_TOKEN'], envAllowlist: undefined, nonInteractiveDefaults: false };
    expect(taskEnv(config, worker)).toEqual({ PATH: '/usr/bin', HOME: '/root', LC_ALL: 'C' });
  });
});
