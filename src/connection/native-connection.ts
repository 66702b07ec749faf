import { NativeConnection } from '@temporalio/worker';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import { type ConnectionConfig, resolveConnectionConfig, type TemporalTarget } from './connection-config.js';
import { connectExplained } from './tls-handshake.js';

/** The address each connection made here was made to: a `NativeConnection` does not say. */
const addresses = new WeakMap<NativeConnection, string>();

/**
 * Connects a worker's native connection with the same settings `connectClient` reads (flags, the
 * `TEMPORAL_*` variables, the `temporal.toml` profile); a failure is one `TemporalUnreachableError`
 * line. Pass the connection and the config's namespace to `createBashWorker`.
 */
export async function connectNativeConnection(
  target: TemporalTarget | ConnectionConfig = {},
): Promise<NativeConnection> {
  const config = 'connectionOptions' in target ? target : resolveConnectionConfig(target);
  const connection = await connectExplained(
    config,
    CONNECT_TIMEOUT_MS,
    () => NativeConnection.connect(config.connectionOptions),
    undefined,
    true,
  );
  addresses.set(connection, config.address);
  return connection;
}

/** The address `connectNativeConnection` made `connection` to (`host:port`); undefined for one made otherwise. */
export function connectionAddress(connection: NativeConnection): string | undefined {
  return addresses.get(connection);
}
