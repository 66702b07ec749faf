import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec.js';
import { type RunningCodecServer, startCodecServer } from '../../src/codec/codec-server.js';
import { CodecKeyring } from '../../src/codec/keyring.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';

const UI = 'http://localhost:8233';
const token = randomBytes(24).toString('base64url');
const codec = new AesGcmPayloadCodec(new CodecKeyring([{ id: 'k1', secret: randomBytes(CODEC_KEY_BYTES) }]));
let server: RunningCodecServer;

beforeAll(async () => {
  server = await startCodecServer({ codec, token, allowedOrigins: [UI], port: 0 });
});

afterAll(async () => {
  await server?.close();
});

const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

async function encrypted(value: unknown) {
  const [payload] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  return toJson(payload as Payload);
}

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}

describe('durable-bash codec server', () => {
  it('listens on loopback only by default', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses a request without the token, or with a wrong one, with 401', async () => {
    const body = { payloads: [await encrypted('secret')] };
    const missing = await post('/decode', body);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(await missing.json()).toEqual({ error: 'missing or wrong token' });
    expect((await post('/decode', body, { authorization: `Bearer ${token}x` })).status).toBe(401);
    expect((await post(`/${token}x/decode`, body)).status).toBe(401);
    expect((await post('/encode', body, { authorization: token })).status).toBe(401);
  });

  it('decodes with the bearer token, in the codec-server JSON format', async () => {
    const response = await post(
      '/decode',
      { payloads: [await encrypted({ command: 'echo hi' })] },
      { authorization: `Bearer ${token}` },
    );
    expect(response.status).toBe(200);
    const { payloads } = (await response.json()) as { payloads: ReturnType<typeof toJson>[] };
    expect(payloads).toEqual([toJson(defaultPayloadConverter.toPayload({ command: 'echo hi' }))]);
  });

  it('decodes a payload that was never encrypted to the refusal the workers see, not to its content', async () => {
    const response = await post(
      '/decode',
      { payloads: [toJson(defaultPayloadConverter.toPayload({ approved: true, by: 'mallory' }))] },
      { authorization: `Bearer ${token}` },
    );
    expect(response.status).toBe(200);
    const { payloads } = (await response.json()) as { payloads: ReturnType<typeof toJson>[] };
    expect(payloads.map((payload) => Buffer.from(payload.data, 'base64').toString())).toEqual([
      '{"durableBashUnencryptedPayload":"refused"}',
    ]);
  });

  it('encodes, and decodes with the token as the endpoint path (what the Web UI can send)', async () => {
    const plain = toJson(defaultPayloadConverter.toPayload('round trip'));
    const encoded = (await (await post(`/${token}/encode`, { payloads: [plain] })).json()) as {
      payloads: ReturnType<typeof toJson>[];
    };
    expect(encoded.payloads[0]?.metadata.encoding).toBe(Buffer.from('binary/encrypted').toString('base64'));
    const decoded = await (await post(`/${token}/decode`, encoded)).json();
    expect(decoded).toEqual({ payloads: [plain] });
  });

  it('answers a malformed body or an unknown key with 400, and other paths with 404', async () => {
    const auth = { authorization: `Bearer ${token}` };
    expect((await post('/decode', { nope: 1 }, auth)).status).toBe(400);
    const other = new AesGcmPayloadCodec(
      new CodecKeyring([{ id: 'k9', secret: randomBytes(CODEC_KEY_BYTES) }]),
    );
    const [foreign] = await other.encode([defaultPayloadConverter.toPayload('x')]);
    const response = await post('/decode', { payloads: [toJson(foreign as Payload)] }, auth);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'cannot decrypt a payload encrypted with codec key "k9": the keyring holds only k1',
    });
    expect((await post('/other', { payloads: [] }, auth)).status).toBe(404);
  });

  it('sends CORS headers only to the pinned Web UI origin', async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, x-namespace',
        },
      });
    const allowed = await preflight(UI);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(UI);
    expect(allowed.headers.get('access-control-allow-headers')).toBe(
      'authorization, content-type, x-namespace',
    );
    const foreign = await preflight('http://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

    const body = { payloads: [await encrypted('x')] };
    const fromUi = await post('/decode', body, { origin: UI, authorization: `Bearer ${token}` });
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(UI);
    const fromElsewhere = await post('/decode', body, {
      origin: 'http://evil.example',
      authorization: `Bearer ${token}`,
    });
    expect(fromElsewhere.status).toBe(403);
    expect(fromElsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the codec server’s pinned origins', () => {
  it('match the Origin header browsers send even when written with a path or a default port', async () => {
    const pinned = await startCodecServer({
      codec,
      token,
      allowedOrigins: ['http://localhost:8080/', 'https://ui.example:443'],
      port: 0,
    });
    try {
      for (const origin of ['http://localhost:8080', 'https://ui.example']) {
        const response = await fetch(`${pinned.url}/decode`, { method: 'OPTIONS', headers: { origin } });
        expect(response.status).toBe(204);
        expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      }
    } finally {
      await pinned.close();
    }
  });

  it('refuses an origin that is not one, in one line', async () => {
    await expect(
      startCodecServer({ codec, token, allowedOrigins: ['localhost:8233'], port: 0 }),
    ).rejects.toThrow('invalid UI origin "localhost:8233": expected <scheme>://<host>[:<port>]');
    await expect(startCodecServer({ codec, token, allowedOrigins: ['*'], port: 0 })).rejects.toThrow(
      'invalid UI origin "*": expected <scheme>://<host>[:<port>]',
    );
  });
});
