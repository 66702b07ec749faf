/**
 * The payload codec that encrypts everything durable-bash stores in Temporal: each payload, whole
 * (its metadata too), becomes AES-256-GCM ciphertext under the keyring's current key, with the key's
 * id in the new payload's metadata so that any key still in the keyring decrypts it. A payload that
 * was not encrypted is refused: it decodes to UNENCRYPTED_PAYLOAD (shared/unencrypted-payload.ts).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  defaultPayloadConverter,
  METADATA_ENCODING_KEY,
  type Payload,
  type PayloadCodec,
} from '@temporalio/common';
import proto from '@temporalio/proto';
import { CodecKeyError } from '../shared/errors.js';
import { UNENCRYPTED_PAYLOAD } from '../shared/unencrypted-payload.js';
import type { CodecKeyring } from './keyring.js';

/** The `encoding` metadata of an encrypted payload. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';

/** The metadata key naming the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';

/** AES-GCM's recommended nonce: 96 bits, random per payload (NIST SP 800-38D). */
const IV_BYTES = 12;
/** The full 128-bit authentication tag: shorter tags weaken what a forged payload must guess. */
const TAG_BYTES = 16;

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

/**
 * Encrypts payloads with the keyring's current key; decrypts those of any key it holds. A payload
 * that was never encrypted (sent by a client without the keys, or stored before encryption was
 * turned on) decodes to UNENCRYPTED_PAYLOAD, never to what it holds: the key is what tells the
 * deployment's own clients and workers from anyone else who reaches Temporal. It is a value, not
 * a throw, because the codec also decodes workflow activations, where a throw would fail every
 * workflow task of a workflow whose history holds such a payload; the same payload always decodes
 * the same way, so a replay takes the path the run took.
 * The ciphertext is `iv (12 bytes) || ciphertext || tag (16 bytes)`, authenticated with the key id.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  constructor(readonly keyring: CodecKeyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, secret } = this.keyring.current;
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      cipher.setAAD(Buffer.from(id, 'utf8'));
      const plain = PayloadMessage.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING, 'utf8'),
          [KEY_ID_METADATA]: Buffer.from(id, 'utf8'),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
      if (encoding === undefined || Buffer.from(encoding).toString('utf8') !== ENCRYPTED_ENCODING) {
        return defaultPayloadConverter.toPayload(UNENCRYPTED_PAYLOAD);
      }
      const idBytes = payload.metadata?.[KEY_ID_METADATA];
      if (idBytes === undefined || idBytes === null) {
        throw new CodecKeyError(`cannot decrypt a payload without its ${KEY_ID_METADATA} metadata`);
      }
      const id = Buffer.from(idBytes).toString('utf8');
      const key = this.keyring.get(id);
      if (key === undefined) {
        throw new CodecKeyError(
          `cannot decrypt a payload encrypted with codec key ${JSON.stringify(id)}: the keyring holds only ${this.keyring.ids.join(', ')}`,
        );
      }
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES) {
        throw new CodecKeyError(`cannot decrypt a payload of codec key ${id}: it is too short`);
      }
      const decipher = createDecipheriv('aes-256-gcm', key.secret, data.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(id, 'utf8'));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([
          decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        throw new CodecKeyError(
          `cannot decrypt a payload of codec key ${id}: authentication failed (a different key under that id, or altered data)`,
        );
      }
      return PayloadMessage.decode(plain);
    });
  }
}
