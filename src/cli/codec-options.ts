import type { DataConverter } from '@temporalio/common';
import { type Command, Option } from 'commander';
import { encryptingDataConverter } from '../codec/data-converter.js';
import { CODEC_KEY_FILE_ENV, CODEC_KEYS_ENV, loadKeyring } from '../codec/keyring.js';

export interface CodecFlags {
  /** A key file; absent: DURABLE_BASH_CODEC_KEYS, else no encryption. */
  codecKeyFile?: string;
}

/** --codec-key-file: encrypt what the command stores in Temporal (and decrypt what it reads). */
export function codecKeyFileOption(): Option {
  return new Option(
    '--codec-key-file <file>',
    `encryption keys, one "<key id>=<base64 of 32 bytes>" a line, the current key first (or set ${CODEC_KEYS_ENV})`,
  ).env(CODEC_KEY_FILE_ENV);
}

export function withCodecOption(command: Command): Command {
  return command.addOption(codecKeyFileOption());
}

/**
 * The encrypting data converter the flags (or DURABLE_BASH_CODEC_KEYS) call for; undefined for none.
 * Once read, the key variables leave this process's environment: the commands a `worker` or `dev`
 * runs inherit it, and one `echo $DURABLE_BASH_CODEC_KEYS` would otherwise print every key.
 */
export function codecDataConverter(flags: CodecFlags): DataConverter | undefined {
  const keyring = loadKeyring({ keyFile: flags.codecKeyFile });
  delete process.env[CODEC_KEYS_ENV];
  delete process.env[CODEC_KEY_FILE_ENV];
  return keyring === undefined ? undefined : encryptingDataConverter(keyring);
}

/** The environment variable holding the codec server's bearer token (or use --token-file). */
export const CODEC_SERVER_TOKEN_ENV = 'DURABLE_BASH_CODEC_SERVER_TOKEN';

/** `codec-server`'s flags (serve-codec.ts). */
export interface CodecServerFlags extends CodecFlags {
  host: string;
  port: number;
  uiOrigin: string[];
  tokenFile?: string;
}
