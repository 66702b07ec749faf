/**
 * The data converter that turns encryption on: give the same one to every client and worker of a
 * namespace (the tools' client, command workers, agent workers, the CLI).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from './aes-gcm-codec.js';
import type { CodecKeyring } from './keyring.js';

/**
 * Encrypts every payload (inputs, results, memos, summaries, heartbeat details) and, through the
 * failure converter, the messages and stack traces of failures raised outside workflow code (the
 * command activities' failures, which can quote a workdir or a command), which Temporal otherwise
 * stores as plain text. The codec runs in the client and the worker, outside the workflow sandbox.
 */
export function encryptingDataConverter(keyring: CodecKeyring): DataConverter {
  return {
    payloadCodecs: [new AesGcmPayloadCodec(keyring)],
    failureConverterPath: encodedFailuresPath(),
  };
}

/**
 * The compiled failure converter module (`encoded-failures.cts` compiles to `.cjs`). Run from the
 * TypeScript sources (tests), the build's copy is used: Temporal `require`s it, and a plain
 * `require` cannot load TypeScript.
 */
function encodedFailuresPath(): string {
  const beside = fileURLToPath(new URL('./encoded-failures.cjs', import.meta.url));
  return existsSync(beside)
    ? beside
    : fileURLToPath(new URL('../../dist/codec/encoded-failures.cjs', import.meta.url));
}
