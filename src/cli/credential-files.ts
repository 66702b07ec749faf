/**
 * The files of key material a worker was given (its codec key file, its TLS client key, its
 * `temporal.toml`, which may hold an API key): hidden from its commands in every mode that can hide
 * paths (sessions apart, the sandbox), without the operator listing them in `--sandbox-hide`.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CODEC_KEY_FILE_ENV } from '../codec/keyring.js';
import type { CodecFlags } from './codec-options.js';
import type { ConnectionFlags } from './options.js';

export function credentialFiles(
  flags: Partial<CodecFlags & ConnectionFlags>,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const candidates = [
    flags.codecKeyFile ?? env[CODEC_KEY_FILE_ENV],
    flags.tlsKeyPath ?? env.TEMPORAL_TLS_CLIENT_KEY_PATH,
    flags.configFile ??
      env.TEMPORAL_CONFIG_FILE ??
      path.join(os.homedir(), '.config/temporalio/temporal.toml'),
  ];
  return candidates
    .filter((file): file is string => typeof file === 'string' && file !== '' && existsSync(file))
    .map((file) => path.resolve(file));
}
