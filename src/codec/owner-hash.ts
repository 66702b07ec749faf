/**
 * The owner search attribute under encryption: search attributes are never encoded, so the value
 * stored is a keyed hash of the owner token, `hmac:<key id>:<base64url HMAC-SHA256>`. It is
 * deterministic (a listing queries it by value) and useless without the key: owner ids such as
 * `cli:alice@build-3` are guessable, and only a key holder can test a guess.
 *
 * Each key of the keyring has its own hash key (HKDF of the key, never used to encrypt). A task is
 * hashed under the current key when it starts, and keeps that value. After a rotation a listing
 * asks for any of the keyring's hashes (`BashTaskOwner IN (...)`), and the fence accepts the hash of
 * any key it holds, so tasks from before the rotation stay listed and reachable for as long as
 * their key stays in the keyring (without it they could not be read anyway). A separate, never
 * rotated hash key would avoid the `IN`, but a leak of it could then never be undone.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { AesGcmPayloadCodec } from './aes-gcm-codec.js';
import type { CodecKeyring } from './keyring.js';

const PREFIX = 'hmac:';
const HKDF_INFO = 'durable-bash owner hash v1';

/** Hashes owner tokens (see ownership.ts) with a keyring's keys. */
export class OwnerHasher {
  private readonly hashKeys: ReadonlyMap<string, Buffer>;

  constructor(private readonly keyring: CodecKeyring) {
    this.hashKeys = new Map(
      keyring.keys.map((key) => [
        key.id,
        Buffer.from(hkdfSync('sha256', key.secret, Buffer.alloc(0), HKDF_INFO, 32)),
      ]),
    );
  }

  /** The value a new task stores: the token's hash under the current key. */
  hash(token: string): string {
    return this.hashWith(this.keyring.current.id, token) as string;
  }

  /** The token's hash under every key of the keyring, current first: what a listing asks for. */
  allHashes(token: string): string[] {
    return this.keyring.ids.map((id) => this.hashWith(id, token) as string);
  }

  /** Whether a stored value is the hash of `token` under a key of the keyring. */
  matches(stored: string, token: string): boolean {
    const id = stored.slice(PREFIX.length, stored.indexOf(':', PREFIX.length));
    const expected = this.hashWith(id, token);
    if (expected === undefined || expected.length !== stored.length) return false;
    return timingSafeEqual(Buffer.from(expected), Buffer.from(stored));
  }

  private hashWith(id: string, token: string): string | undefined {
    const key = this.hashKeys.get(id);
    if (key === undefined) return undefined;
    return `${PREFIX}${id}:${createHmac('sha256', key).update(token, 'utf8').digest('base64url')}`;
  }
}

/** Whether a stored owner value is a keyed hash (a task started with encryption on). */
export function isOwnerHash(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/**
 * The owner hasher of a client whose data converter encrypts with durable-bash's codec; undefined
 * for a client without it (owners are then stored as plain tokens).
 */
export function ownerHasherOf(client: Client): OwnerHasher | undefined {
  const codec = client.options.loadedDataConverter.payloadCodecs.find(
    (candidate) => candidate instanceof AesGcmPayloadCodec,
  );
  return codec === undefined ? undefined : new OwnerHasher(codec.keyring);
}
