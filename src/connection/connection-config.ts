/**
 * Where and how to reach Temporal, in one place for clients and workers: explicit options (CLI
 * flags) over the standard `TEMPORAL_*` variables over a `temporal.toml` profile over Temporal's
 * defaults, read through `@temporalio/envconfig`.
 */
import type { TLSConfig } from '@temporalio/client';
import {
  type ClientConfigProfile,
  type ClientConfigTLS,
  type ConfigDataSource,
  loadClientConfigProfile,
  toClientOptions,
} from '@temporalio/envconfig';
import { ConnectionConfigError } from '../shared/errors.js';

export type { ConfigDataSource };

export const DEFAULT_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';

/** TLS settings; each one is a file (`{ path }`) or its contents (`{ data }`). */
export interface TemporalTlsOptions {
  /** The authority that signed the server's certificate. @default the system's trusted roots */
  serverCACert?: ConfigDataSource;
  /** The name the server's certificate must carry (and the SNI sent). @default the address's host */
  serverName?: string;
  /** This client's certificate, for mTLS; needs `clientKey`. */
  clientCert?: ConfigDataSource;
  /** The private key of `clientCert`. */
  clientKey?: ConfigDataSource;
}

/** How to reach Temporal. Every field left out comes from the environment, then the profile. */
export interface TemporalTarget {
  /** `host:port` of the frontend. @default $TEMPORAL_ADDRESS, else the profile's, else 'localhost:7233' */
  address?: string;
  /** @default $TEMPORAL_NAMESPACE, else the profile's, else 'default' */
  namespace?: string;
  /** The `temporal.toml` profile to read. @default $TEMPORAL_PROFILE, else 'default' (when present) */
  profile?: string;
  /** The config file. @default $TEMPORAL_CONFIG_FILE, else `$XDG_CONFIG_HOME/temporalio/temporal.toml` */
  configFile?: string;
  /** Sent as `authorization: Bearer <key>`; turns TLS on unless TLS is disabled. @default $TEMPORAL_API_KEY, else the profile's */
  apiKey?: string;
  /**
   * `true`: TLS with the settings the environment and profile give (else the system's roots);
   * `false`: plaintext; an object: TLS, with these settings over theirs.
   * @default $TEMPORAL_TLS and $TEMPORAL_TLS_*, else the profile's `[tls]`, else plaintext
   */
  tls?: boolean | TemporalTlsOptions;
  /** The variables to read instead of `process.env` (tests, embedding). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The options both `Connection.connect` (client) and `NativeConnection.connect` (worker) take. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

export interface ConnectionConfig {
  address: string;
  namespace: string;
  connectionOptions: TemporalConnectionOptions;
}

/**
 * Resolves a target into connection options. Files named by paths are read here, so a missing
 * certificate fails now, as a `ConnectionConfigError`.
 */
export function resolveConnectionConfig(target: TemporalTarget = {}): ConnectionConfig {
  try {
    const profile = withExplicit(
      loadClientConfigProfile({
        profile: target.profile,
        configSource: target.configFile === undefined ? undefined : { path: target.configFile },
        overrideEnvVars: definedOnly(target.env ?? process.env),
      }),
      target,
    );
    const tls = profile.tls;
    if (tls?.disabled !== true && (tls?.clientCert === undefined) !== (tls?.clientKey === undefined)) {
      throw new Error('a TLS client certificate and its key must be given together');
    }
    const { connectionOptions } = toClientOptions(profile);
    const address = profile.address ?? DEFAULT_ADDRESS;
    return {
      address,
      namespace: profile.namespace ?? DEFAULT_NAMESPACE,
      connectionOptions: {
        address,
        // Kept when false: the SDK turns TLS on for an API key unless it is explicitly off.
        ...(connectionOptions.tls == null ? {} : { tls: connectionOptions.tls }),
        ...(profile.apiKey === undefined ? {} : { apiKey: profile.apiKey }),
        ...(profile.grpcMeta === undefined ? {} : { metadata: profile.grpcMeta }),
      },
    };
  } catch (err) {
    throw new ConnectionConfigError(err instanceof Error ? err.message : String(err));
  }
}

/** The profile (already under the environment's variables) with the explicit options on top. */
function withExplicit(profile: ClientConfigProfile, target: TemporalTarget): ClientConfigProfile {
  const merged: ClientConfigProfile = { ...profile };
  if (target.address !== undefined) merged.address = target.address;
  if (target.namespace !== undefined) merged.namespace = target.namespace;
  if (target.apiKey !== undefined) merged.apiKey = target.apiKey;
  if (target.tls === false) merged.tls = { disabled: true };
  else if (target.tls === true) merged.tls = { ...profile.tls, disabled: false };
  else if (target.tls !== undefined)
    merged.tls = { ...profile.tls, ...explicitTls(target.tls), disabled: false };
  return merged;
}

function explicitTls({
  serverCACert,
  serverName,
  clientCert,
  clientKey,
}: TemporalTlsOptions): ClientConfigTLS {
  return Object.fromEntries(
    Object.entries({ serverCACert, serverName, clientCert, clientKey }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
