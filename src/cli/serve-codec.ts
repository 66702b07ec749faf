import { readFileSync } from 'node:fs';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec.js';
import { startCodecServer } from '../codec/codec-server.js';
import { CODEC_KEY_FILE_ENV, CODEC_KEYS_ENV, loadKeyring } from '../codec/keyring.js';
import { CODEC_SERVER_TOKEN_ENV, type CodecServerFlags } from './codec-options.js';

/**
 * `durable-bash codec-server`: serves the codec to the Web UI and the `temporal` CLI until Ctrl-C.
 * Needs the keys and a token (from a file or the environment, never the command line).
 */
export async function runCodecServer(flags: CodecServerFlags): Promise<void> {
  const keyring = loadKeyring({ keyFile: flags.codecKeyFile });
  if (keyring === undefined) {
    throw new Error(
      `codec-server needs the keys: --codec-key-file, ${CODEC_KEY_FILE_ENV} or ${CODEC_KEYS_ENV}`,
    );
  }
  const token = (
    flags.tokenFile !== undefined
      ? readFileSync(flags.tokenFile, 'utf8')
      : (process.env[CODEC_SERVER_TOKEN_ENV] ?? '')
  ).trim();
  if (token === '') throw new Error(`codec-server needs a token: --token-file or ${CODEC_SERVER_TOKEN_ENV}`);
  const server = await startCodecServer({
    codec: new AesGcmPayloadCodec(keyring),
    token,
    allowedOrigins: flags.uiOrigin,
    host: flags.host,
    port: flags.port,
  });
  process.stdout.write(
    [
      `durable-bash codec server listening on ${server.url}`,
      `  allowed UI origins: ${flags.uiOrigin.join(', ')}`,
      `  Web UI codec endpoint: ${server.url}/<token>   temporal CLI: --codec-endpoint ${server.url} --codec-auth 'Bearer <token>'`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}
