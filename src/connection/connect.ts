import { Client, Connection, type DataConverter } from '@temporalio/client';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import { type ConnectionConfig, resolveConnectionConfig, type TemporalTarget } from './connection-config.js';
import { connectExplained } from './tls-handshake.js';

export type { TemporalTarget };

/** The address and namespace a target resolves to (see `resolveConnectionConfig` for the rest). */
export function resolveTarget(target: TemporalTarget = {}): { address: string; namespace: string } {
  const { address, namespace } = resolveConnectionConfig(target);
  return { address, namespace };
}

/**
 * Connects a client (address, namespace, TLS and API key from `target`, the `TEMPORAL_*` variables
 * and the `temporal.toml` profile), failing within CONNECT_TIMEOUT_MS with a one-line error when no
 * server answers or the TLS handshake is refused.
 * `dataConverter` turns encryption on (see `encryptingDataConverter`).
 */
export async function connectClient(
  target: TemporalTarget | ConnectionConfig = {},
  dataConverter?: DataConverter,
): Promise<Client> {
  const config = 'connectionOptions' in target ? target : resolveConnectionConfig(target);
  // Lazy, then connected, rather than `Connection.connect`: a connection that failed gets closed.
  const connection = Connection.lazy({ ...config.connectionOptions, connectTimeout: CONNECT_TIMEOUT_MS });
  await connectExplained(
    config,
    CONNECT_TIMEOUT_MS,
    async () => {
      await connection.ensureConnected();
      return connection;
    },
    () => void connection.close(),
  );
  return new Client({ connection, namespace: config.namespace, ...(dataConverter ? { dataConverter } : {}) });
}

/** The server address a client talks to, when its connection says. */
export function clientAddress(client: Client): string {
  return client.connection instanceof Connection
    ? client.connection.options.address
    : 'the configured address';
}
