/** Payloads the client finds in raw server records (histories, pending activities), decoded as its results are. */
import type { Client, Payload } from '@temporalio/client';

/** Decodes a raw payload the way the client decodes results: its codecs (in reverse), then its converter. */
export async function decodePayload<T>(client: Client, payload: Payload): Promise<T> {
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  let decoded = payload;
  for (const codec of [...payloadCodecs].reverse()) {
    [decoded = decoded] = await codec.decode([decoded]);
  }
  return payloadConverter.fromPayload<T>(decoded);
}
