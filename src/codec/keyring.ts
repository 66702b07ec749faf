/**
 * The encryption keys of the payload codec: one current key that encrypts, and older keys kept only
 * to decrypt (rotation). Keys are given as text, `<key id>=<base64 of 32 bytes>` entries separated by
 * newlines or commas; the first entry is the current key; blank lines and `#` comments are ignored.
 */
import { readFileSync } from 'node:fs';
import { CodecKeyError } from '../shared/errors.js';
import { CODEC_KEY_BYTES } from '../shared/limits.js';

/** The environment variable holding a keyring's text (an alternative to a key file). */
export const CODEC_KEYS_ENV = 'DURABLE_BASH_CODEC_KEYS';

/** The environment variable naming a key file (what `--codec-key-file` defaults to). */
export const CODEC_KEY_FILE_ENV = 'DURABLE_BASH_CODEC_KEY_FILE';

/**
 * Key ids travel in payload metadata and in the owner search attribute's value: letters, digits,
 * `.`, `_` and `-` only, so they never need escaping in a visibility query.
 */
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

export interface CodecKey {
  id: string;
  /** CODEC_KEY_BYTES bytes. */
  secret: Buffer;
}

/** A current key and the older keys still accepted for decryption, each under a unique id. */
export class CodecKeyring {
  private readonly byId: ReadonlyMap<string, CodecKey>;

  constructor(readonly keys: readonly CodecKey[]) {
    const [current] = keys;
    if (current === undefined) throw new CodecKeyError('a codec keyring needs at least one key');
    const byId = new Map<string, CodecKey>();
    for (const key of keys) {
      if (!KEY_ID.test(key.id)) {
        throw new CodecKeyError(
          `invalid codec key id ${JSON.stringify(key.id)}: expected 1 to 64 of A-Z a-z 0-9 . _ -`,
        );
      }
      if (key.secret.length !== CODEC_KEY_BYTES) {
        throw new CodecKeyError(
          `invalid codec key ${key.id}: expected ${CODEC_KEY_BYTES} bytes, got ${key.secret.length}`,
        );
      }
      if (byId.has(key.id)) throw new CodecKeyError(`codec key id ${key.id} appears twice`);
      byId.set(key.id, key);
    }
    this.byId = byId;
  }

  /** The key new payloads are encrypted with: the first one given. */
  get current(): CodecKey {
    return this.keys[0] as CodecKey;
  }

  /** The key with this id, or undefined when the keyring does not hold it. */
  get(id: string): CodecKey | undefined {
    return this.byId.get(id);
  }

  get ids(): string[] {
    return this.keys.map((key) => key.id);
  }
}

/**
 * Parses a keyring's text (see the module comment); `source` names it in errors, which point at an
 * entry by its number and never quote it (it may hold key material).
 */
export function parseKeyring(text: string, source: string): CodecKeyring {
  const entries = text
    .split('\n')
    .flatMap((line) => line.replace(/#.*/, '').split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const keys = entries.map((entry, index): CodecKey => {
    const where = `entry ${index + 1} of ${source}`;
    const eq = entry.indexOf('=');
    const id = entry.slice(0, Math.max(eq, 0)).trim();
    const encoded = entry.slice(eq + 1).trim();
    if (eq <= 0 || encoded === '') {
      throw new CodecKeyError(
        `invalid codec key ${where}: expected <key id>=<base64 of ${CODEC_KEY_BYTES} bytes>`,
      );
    }
    if (!KEY_ID.test(id)) {
      throw new CodecKeyError(`invalid codec key id in ${where}: expected 1 to 64 of A-Z a-z 0-9 . _ -`);
    }
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) {
      throw new CodecKeyError(`invalid codec key ${id} in ${source}: expected base64`);
    }
    // Node's base64 decoder takes the URL-safe alphabet too.
    return { id, secret: Buffer.from(encoded, 'base64') };
  });
  if (keys.length === 0) throw new CodecKeyError(`no codec keys in ${source}`);
  return new CodecKeyring(keys);
}

export interface KeyringSources {
  /** A key file (see the module comment). @default $DURABLE_BASH_CODEC_KEY_FILE */
  keyFile?: string | undefined;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
}

/**
 * The keyring the configuration names: a key file, else DURABLE_BASH_CODEC_KEYS; undefined when
 * neither is set (encryption off).
 */
export function loadKeyring(sources: KeyringSources = {}): CodecKeyring | undefined {
  const env = sources.env ?? process.env;
  const keyFile = sources.keyFile ?? nonEmpty(env[CODEC_KEY_FILE_ENV]);
  if (keyFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (err) {
      throw new CodecKeyError(`cannot read the codec key file ${keyFile}: ${(err as Error).message}`);
    }
    return parseKeyring(text, keyFile);
  }
  const inline = nonEmpty(env[CODEC_KEYS_ENV]);
  return inline === undefined ? undefined : parseKeyring(inline, CODEC_KEYS_ENV);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
