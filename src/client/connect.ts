import { Client, Connection } from '@temporalio/client';
import { TemporalUnreachableError } from '../errors.js';

/** How long a connection attempt or a start request may wait for the server. */
export const CONNECT_TIMEOUT_MS = 5_000;

export interface TemporalTarget {
  /** @default $TEMPORAL_ADDRESS, else 'localhost:7233' */
  address?: string;
  /** @default $TEMPORAL_NAMESPACE, else 'default' */
  namespace?: string;
}

/** Fills an address and namespace from the standard environment variables, then Temporal's defaults. */
export function resolveTarget(target: TemporalTarget = {}): Required<TemporalTarget> {
  return {
    address: target.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    namespace: target.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
  };
}

/** Connects a client, failing within CONNECT_TIMEOUT_MS with a one-line error when no server answers. */
export async function connectClient(target: TemporalTarget = {}): Promise<Client> {
  const { address, namespace } = resolveTarget(target);
  try {
    const connection = await Connection.connect({ address, connectTimeout: CONNECT_TIMEOUT_MS });
    return new Client({ connection, namespace });
  } catch (err) {
    throw new TemporalUnreachableError(address, firstLine(err));
  }
}

/** The server address a client talks to, when its connection says. */
export function clientAddress(client: Client): string {
  return client.connection instanceof Connection
    ? client.connection.options.address
    : 'the configured address';
}

export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n', 1)[0] ?? text;
}
