import { type Command, InvalidArgumentError, Option } from 'commander';
import type { TemporalTarget } from '../connection/connection-config.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { localSessionId } from './identity.js';

/**
 * Adds the options every server-facing command shares: where Temporal is and how to reach it, and
 * --task-queue. A connection flag left out comes from the `TEMPORAL_*` variables, then the
 * `temporal.toml` profile, then Temporal's defaults (see `resolveConnectionConfig`).
 */
export function withServerOptions(command: Command): Command {
  return command
    .option(
      '--address <host:port>',
      'Temporal frontend address (env: TEMPORAL_ADDRESS; default: localhost:7233)',
    )
    .option('--namespace <name>', 'Temporal namespace (env: TEMPORAL_NAMESPACE; default: default)')
    .option('--profile <name>', 'temporal.toml profile to read (env: TEMPORAL_PROFILE; default: default)')
    .option(
      '--config-file <file>',
      'temporal.toml to read (env: TEMPORAL_CONFIG_FILE; default: ~/.config/temporalio/temporal.toml)',
    )
    .option('--tls', 'connect with TLS (env: TEMPORAL_TLS; on when any --tls-* flag or an API key is given)')
    .option(
      '--tls-ca-path <file>',
      'CA certificate the server must chain to (env: TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
    )
    .option('--tls-cert-path <file>', 'client certificate for mTLS (env: TEMPORAL_TLS_CLIENT_CERT_PATH)')
    .option('--tls-key-path <file>', 'private key of --tls-cert-path (env: TEMPORAL_TLS_CLIENT_KEY_PATH)')
    .option(
      '--tls-server-name <name>',
      "name the server's certificate must carry (env: TEMPORAL_TLS_SERVER_NAME)",
    )
    .option('--api-key <key>', 'API key, sent as a bearer token (prefer the env: TEMPORAL_API_KEY)')
    .addOption(
      new Option('--task-queue <name>', 'task queue the command workers serve').default(DEFAULT_TASK_QUEUE),
    );
}

export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  profile?: string;
  configFile?: string;
  tls?: boolean;
  tlsCaPath?: string;
  tlsCertPath?: string;
  tlsKeyPath?: string;
  tlsServerName?: string;
  apiKey?: string;
}

export interface ServerOptions extends ConnectionFlags {
  taskQueue: string;
}

/** The connection flags as a target: a --tls-* flag turns TLS on with its setting over the profile's. */
export function connectionTarget(flags: ConnectionFlags): TemporalTarget {
  const path = (file: string | undefined) => (file === undefined ? undefined : { path: file });
  const tlsSettings = {
    serverCACert: path(flags.tlsCaPath),
    clientCert: path(flags.tlsCertPath),
    clientKey: path(flags.tlsKeyPath),
    serverName: flags.tlsServerName,
  };
  const anyTlsSetting = Object.values(tlsSettings).some((value) => value !== undefined);
  return {
    address: flags.address,
    namespace: flags.namespace,
    profile: flags.profile,
    configFile: flags.configFile,
    apiKey: flags.apiKey,
    tls: anyTlsSetting ? tlsSettings : flags.tls ? true : undefined,
  };
}

/** The parser of a repeatable flag: each use adds its value to the list. */
export function collectRepeated(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A port flag: 0 (pick a free one) to 65535. */
export function portNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0 || parsed > 65_535)
    throw new InvalidArgumentError(`expected a port number (0 picks a free one), got ${value}`);
  return parsed;
}

export function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0)
    throw new InvalidArgumentError(`expected a positive integer, got ${value}`);
  return parsed;
}

/** Adds --owner: the agent session the command acts as (tasks it starts belong to it; it may touch only those). */
export function withOwnerOption(command: Command, what: string): Command {
  return command.addOption(
    new Option('--owner <session-id>', what)
      .env('DURABLE_BASH_OWNER')
      .default(localSessionId(), 'cli:<user>@<host>, the same across restarts'),
  );
}
