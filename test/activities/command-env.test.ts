import { describe, expect, it } from 'vitest';
import { commandEnv } from '../../src/activities/command-env.js';

const worker = {
  PATH: '/usr/bin',
  HOME: '/root',
  LC_ALL: 'C',
  TEMPORAL_API_KEY: 'k',
  TEMPORAL_TLS_CLIENT_KEY_PATH: '/keys/client.key',
  DURABLE_BASH_CODEC_KEYS: 'a=AAAA',
  DURABLE_BASH_CODEC_KEY_FILE: '/keys/codec',
  DURABLE_BASH_CODEC_SERVER_TOKEN: 't',
  DEPLOY_TOKEN: 'secret',
};

describe("a command's environment", () => {
  it("is the worker's, less its credentials (Temporal's and the codec's) and the configured secrets", () => {
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
});
