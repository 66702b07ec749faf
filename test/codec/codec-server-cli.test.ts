// `durable-bash codec-server` as an operator runs it: the built CLI, keys and token from the
// environment, real HTTP. The server's own behaviour is in codec-server.test.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec.js';
import { parseKeyring } from '../../src/codec/keyring.js';
import { waitFor } from '../helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const keys = `k1=${randomBytes(32).toString('base64')}`;
const token = randomBytes(16).toString('hex');

let server: ChildProcess;
let url: string;

beforeAll(async () => {
  server = spawn(process.execPath, [path.join(root, 'dist/cli/main.js'), 'codec-server', '--port', '0'], {
    env: { ...process.env, DURABLE_BASH_CODEC_KEYS: keys, DURABLE_BASH_CODEC_SERVER_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  server.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await waitFor(() => /listening on (\S+)/.test(out), 30_000);
  url = /listening on (\S+)/.exec(out)?.[1] ?? '';
});

afterAll(async () => {
  if (server.exitCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
});

describe('durable-bash codec-server', () => {
  it('decodes for a caller with the token, and refuses one without', async () => {
    const codec = new AesGcmPayloadCodec(parseKeyring(keys, 'test'));
    const [encrypted] = await codec.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"canary"') },
    ]);
    const payloads = [
      {
        metadata: Object.fromEntries(
          Object.entries(encrypted?.metadata ?? {}).map(([k, v]) => [
            k,
            Buffer.from(v as Uint8Array).toString('base64'),
          ]),
        ),
        data: Buffer.from(encrypted?.data ?? new Uint8Array()).toString('base64'),
      },
    ];
    const post = (headers: Record<string, string>) =>
      fetch(`${url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ payloads }),
      });
    expect((await post({})).status).toBe(401);
    const answer = await post({ authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    const decoded = (await answer.json()) as { payloads: Array<{ data: string }> };
    expect(Buffer.from(decoded.payloads[0]?.data ?? '', 'base64').toString()).toBe('"canary"');
  });

  it('stops on SIGTERM', async () => {
    server.kill('SIGTERM');
    const [code] = await once(server, 'exit');
    expect(code).toBe(0);
  });
});
