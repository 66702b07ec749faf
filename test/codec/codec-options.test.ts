import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { codecDataConverter } from '../../src/cli/codec-options.js';
import { CODEC_KEY_FILE_ENV, CODEC_KEYS_ENV } from '../../src/codec/keyring.js';
import { commandEnv } from '../../src/command-host/containment/command-env.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';

describe('the CLI codec options', () => {
  const saved = { keys: process.env[CODEC_KEYS_ENV], file: process.env[CODEC_KEY_FILE_ENV] };
  afterEach(() => {
    for (const [name, value] of [
      [CODEC_KEYS_ENV, saved.keys],
      [CODEC_KEY_FILE_ENV, saved.file],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('take the keys out of the environment the commands of a worker inherit', () => {
    process.env[CODEC_KEYS_ENV] = `k1=${randomBytes(CODEC_KEY_BYTES).toString('base64')}`;
    expect(codecDataConverter({})?.payloadCodecs?.length).toBe(1);
    expect(process.env[CODEC_KEYS_ENV]).toBeUndefined();
    expect(Object.keys(commandEnv([])).filter((name) => name.startsWith('DURABLE_BASH_CODEC'))).toEqual([]);
  });
});
