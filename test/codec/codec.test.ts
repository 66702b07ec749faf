import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { mayAccess, ownerToken } from '../../src/client/ownership.js';
import { taskListQuery } from '../../src/client/task-list.js';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../src/codec/aes-gcm-codec.js';
import {
  CODEC_KEY_FILE_ENV,
  CODEC_KEYS_ENV,
  CodecKeyring,
  loadKeyring,
  parseKeyring,
} from '../../src/codec/keyring.js';
import { OwnerHasher } from '../../src/codec/owner-hash.js';
import { CodecKeyError } from '../../src/shared/errors.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import { isUnencryptedPayload, UNENCRYPTED_PAYLOAD } from '../../src/shared/unencrypted-payload.js';

const key = (id: string) => ({ id, secret: randomBytes(CODEC_KEY_BYTES) });
const text = (value: string) => Buffer.from(value, 'utf8');
const metadata = (payload: Payload, name: string) => Buffer.from(payload.metadata?.[name] ?? []).toString();

describe('AesGcmPayloadCodec', () => {
  const a = key('a');
  const b = key('b');
  const canary = 'CANARY-codec-unit';

  it('encrypts a payload whole and decrypts it back to the same value', async () => {
    const codec = new AesGcmPayloadCodec(new CodecKeyring([a]));
    const plain = defaultPayloadConverter.toPayload({ command: `echo ${canary}` });
    const [encoded] = await codec.encode([plain]);
    if (!encoded) throw new Error('no payload');
    expect(metadata(encoded, METADATA_ENCODING_KEY)).toBe(ENCRYPTED_ENCODING);
    expect(metadata(encoded, KEY_ID_METADATA)).toBe('a');
    expect(Object.keys(encoded.metadata ?? {}).sort()).toEqual(
      [KEY_ID_METADATA, METADATA_ENCODING_KEY].sort(),
    );
    expect(Buffer.from(encoded.data ?? []).includes(text(canary))).toBe(false);
    expect(Buffer.from(encoded.data ?? []).includes(text('json/plain'))).toBe(false);
    const [decoded] = await codec.decode([encoded]);
    expect(defaultPayloadConverter.fromPayload(decoded as Payload)).toEqual({ command: `echo ${canary}` });
  });

  it('uses a fresh IV for every payload, so equal values never look equal', async () => {
    const codec = new AesGcmPayloadCodec(new CodecKeyring([a]));
    const plain = defaultPayloadConverter.toPayload('same');
    const [first, second] = await codec.encode([plain, plain]);
    expect(Buffer.from(first?.data ?? []).equals(Buffer.from(second?.data ?? []))).toBe(false);
  });

  it('decodes every payload that was never encrypted to the same refusal, holding nothing of it', async () => {
    const codec = new AesGcmPayloadCodec(new CodecKeyring([a]));
    const plain = [
      defaultPayloadConverter.toPayload(`sent in plaintext ${canary}`),
      defaultPayloadConverter.toPayload(undefined),
      { data: text(canary) },
    ];
    const decoded = await codec.decode(plain);
    expect(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual([
      UNENCRYPTED_PAYLOAD,
      UNENCRYPTED_PAYLOAD,
      UNENCRYPTED_PAYLOAD,
    ]);
    for (const payload of decoded) expect(Buffer.from(payload.data ?? []).includes(text(canary))).toBe(false);
    expect(isUnencryptedPayload(defaultPayloadConverter.fromPayload(decoded[0] as Payload))).toBe(true);
  });

  it('fails clearly on a payload of a key id the keyring does not hold', async () => {
    const [encoded] = await new AesGcmPayloadCodec(new CodecKeyring([a])).encode([
      defaultPayloadConverter.toPayload('x'),
    ]);
    const other = new AesGcmPayloadCodec(new CodecKeyring([b]));
    await expect(other.decode([encoded as Payload])).rejects.toThrow(
      new CodecKeyError('cannot decrypt a payload encrypted with codec key "a": the keyring holds only b'),
    );
  });

  it('fails clearly when the key under that id is a different key, or the data was altered', async () => {
    const [encoded] = await new AesGcmPayloadCodec(new CodecKeyring([a])).encode([
      defaultPayloadConverter.toPayload('x'),
    ]);
    const impostor = new AesGcmPayloadCodec(new CodecKeyring([key('a')]));
    const expected = new CodecKeyError(
      'cannot decrypt a payload of codec key a: authentication failed (a different key under that id, or altered data)',
    );
    await expect(impostor.decode([encoded as Payload])).rejects.toThrow(expected);
    const data = Buffer.from(encoded?.data ?? []);
    data[20] = (data[20] ?? 0) ^ 1;
    const codec = new AesGcmPayloadCodec(new CodecKeyring([a]));
    await expect(codec.decode([{ ...encoded, data }])).rejects.toThrow(expected);
    // The key id is authenticated too: relabelling a payload with another held key's id fails.
    const relabelled = { ...encoded, metadata: { ...encoded?.metadata, [KEY_ID_METADATA]: text('b') } };
    await expect(new AesGcmPayloadCodec(new CodecKeyring([a, b])).decode([relabelled])).rejects.toThrow(
      CodecKeyError,
    );
  });

  it('decodes data written with key A after the current key became B, and writes new data with B', async () => {
    const before = new AesGcmPayloadCodec(new CodecKeyring([a]));
    const [old] = await before.encode([defaultPayloadConverter.toPayload('written under a')]);
    const rotated = new AesGcmPayloadCodec(new CodecKeyring([b, a]));
    const [decoded] = await rotated.decode([old as Payload]);
    expect(defaultPayloadConverter.fromPayload(decoded as Payload)).toBe('written under a');
    const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload('written under b')]);
    expect(metadata(fresh as Payload, KEY_ID_METADATA)).toBe('b');
    // Once a is retired, its data no longer decodes; b's still does.
    const retired = new AesGcmPayloadCodec(new CodecKeyring([b]));
    await expect(retired.decode([old as Payload])).rejects.toThrow(CodecKeyError);
    const [again] = await retired.decode([fresh as Payload]);
    expect(defaultPayloadConverter.fromPayload(again as Payload)).toBe('written under b');
  });
});

describe('the codec keyring', () => {
  const k1 = randomBytes(32).toString('base64');
  const k2 = randomBytes(32).toString('base64url');

  it('parses entries by line or comma, current key first, ignoring comments and blank lines', () => {
    const keyring = parseKeyring(`# rotated 2025-01\nk2=${k2}\n\n k1 = ${k1}  # old, decrypt only\n`, 'test');
    expect(keyring.ids).toEqual(['k2', 'k1']);
    expect(keyring.current.id).toBe('k2');
    expect(keyring.get('k1')?.secret.equals(Buffer.from(k1, 'base64'))).toBe(true);
    expect(keyring.get('k2')?.secret.equals(Buffer.from(k2, 'base64url'))).toBe(true);
    expect(parseKeyring(`k2=${k2},k1=${k1}`, 'test').ids).toEqual(['k2', 'k1']);
  });

  it('refuses unusable keys with a one-line reason', () => {
    expect(() => parseKeyring('', 'keys.txt')).toThrow(new CodecKeyError('no codec keys in keys.txt'));
    expect(() => parseKeyring(`k=${k1}\n${k1}`, 'keys.txt')).toThrow(
      new CodecKeyError('invalid codec key entry 2 of keys.txt: expected <key id>=<base64 of 32 bytes>'),
    );
    expect(() => parseKeyring(`k=${randomBytes(16).toString('base64')}`, 'keys.txt')).toThrow(
      new CodecKeyError('invalid codec key k: expected 32 bytes, got 16'),
    );
    expect(() => parseKeyring(`k=not base64!`, 'keys.txt')).toThrow(
      new CodecKeyError('invalid codec key k in keys.txt: expected base64'),
    );
    expect(() => parseKeyring(`k=${k1}\nk=${k2}`, 'keys.txt')).toThrow(
      new CodecKeyError('codec key id k appears twice'),
    );
    expect(() => parseKeyring(`it's=${k1}`, 'keys.txt')).toThrow(
      new CodecKeyError('invalid codec key id in entry 1 of keys.txt: expected 1 to 64 of A-Z a-z 0-9 . _ -'),
    );
  });

  it('loads from a key file, else from DURABLE_BASH_CODEC_KEYS, else is off', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'codec-keys-')), 'keys');
    writeFileSync(file, `file-key=${k1}\n`, { mode: 0o600 });
    expect(loadKeyring({ keyFile: file, env: { [CODEC_KEYS_ENV]: `env-key=${k2}` } })?.ids).toEqual([
      'file-key',
    ]);
    expect(loadKeyring({ env: { [CODEC_KEY_FILE_ENV]: file } })?.ids).toEqual(['file-key']);
    expect(loadKeyring({ env: { [CODEC_KEYS_ENV]: `env-key=${k2}` } })?.ids).toEqual(['env-key']);
    expect(loadKeyring({ env: {} })).toBeUndefined();
    expect(() => loadKeyring({ keyFile: `${file}.missing`, env: {} })).toThrow(
      /^cannot read the codec key file/,
    );
  });
});

describe('the keyed owner hash', () => {
  const a = key('a');
  const b = key('b');
  const token = ownerToken('session-1');

  it('is deterministic, differs by key and by owner, and never shows the owner', () => {
    const hasher = new OwnerHasher(new CodecKeyring([a]));
    const hash = hasher.hash(token);
    expect(hash).toMatch(/^hmac:a:[A-Za-z0-9_-]{43}$/);
    expect(hasher.hash(token)).toBe(hash);
    expect(new OwnerHasher(new CodecKeyring([key('a')])).hash(token)).not.toBe(hash);
    expect(hasher.hash(ownerToken('session-2'))).not.toBe(hash);
    expect(hash).not.toContain('session');
  });

  it('lets the owning session, and only it, through the fence, also after a rotation', () => {
    const before = new OwnerHasher(new CodecKeyring([a]));
    const stored = before.hash(token);
    const rotated = new OwnerHasher(new CodecKeyring([b, a]));
    expect(mayAccess(stored, 'session-1', before)).toBe(true);
    expect(mayAccess(stored, 'session-1', rotated)).toBe(true);
    expect(mayAccess(stored, 'session-2', rotated)).toBe(false);
    expect(mayAccess(stored, undefined, rotated)).toBe(false);
    // Without the key (a client without the codec, or with a itself retired) nobody matches.
    expect(mayAccess(stored, 'session-1')).toBe(false);
    expect(mayAccess(stored, 'session-1', new OwnerHasher(new CodecKeyring([b])))).toBe(false);
    // Tasks started before encryption was turned on keep their plain owner.
    expect(mayAccess(token, 'session-1', rotated)).toBe(true);
  });

  it('lists a session’s tasks under every key of the keyring', () => {
    const rotated = new OwnerHasher(new CodecKeyring([b, a]));
    const [underB, underA] = rotated.allHashes(token);
    expect(underA).toBe(new OwnerHasher(new CodecKeyring([a])).hash(token));
    expect(taskListQuery({ owner: 'session-1' }, rotated)).toBe(
      `WorkflowType = 'bashTask' AND BashTaskOwner IN ('${underB}', '${underA}')`,
    );
  });
});
