import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectionTarget } from '../../src/cli/options.js';
import { resolveConnectionConfig } from '../../src/connection/connection-config.js';
import { ConnectionConfigError } from '../../src/shared/errors.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pem = (name: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, `-----BEGIN ${name}-----\n`);
  return file;
};
const caPath = pem('ca.pem');
const certPath = pem('cert.pem');
const keyPath = pem('key.pem');
const bytes = (text: string) => new TextEncoder().encode(text);

const configFile = path.join(dir, 'temporal.toml');
writeFileSync(
  configFile,
  [
    '[profile.default]',
    'address = "default.example:7233"',
    '',
    '[profile.prod]',
    'address = "prod.example:7233"',
    'namespace = "prod-ns"',
    'api_key = "profile-key"',
    '[profile.prod.tls]',
    `server_ca_cert_path = "${caPath}"`,
    `client_cert_path = "${certPath}"`,
    `client_key_path = "${keyPath}"`,
    'server_name = "prod.internal"',
    '[profile.prod.grpc_meta]',
    'x-team = "agents"',
    '',
  ].join('\n'),
);

describe('resolveConnectionConfig', () => {
  it('falls back to localhost:7233 and the default namespace, plaintext, with nothing configured', () => {
    expect(resolveConnectionConfig({ env: { HOME: dir } })).toEqual({
      address: 'localhost:7233',
      namespace: 'default',
      connectionOptions: { address: 'localhost:7233' },
    });
  });

  it('reads the profile TEMPORAL_PROFILE names from the file TEMPORAL_CONFIG_FILE names', () => {
    const config = resolveConnectionConfig({
      env: { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' },
    });
    expect(config).toEqual({
      address: 'prod.example:7233',
      namespace: 'prod-ns',
      connectionOptions: {
        address: 'prod.example:7233',
        apiKey: 'profile-key',
        metadata: { 'x-team': 'agents' },
        tls: {
          serverNameOverride: 'prod.internal',
          serverRootCACertificate: bytes('-----BEGIN ca.pem-----\n'),
          clientCertPair: {
            crt: bytes('-----BEGIN cert.pem-----\n'),
            key: bytes('-----BEGIN key.pem-----\n'),
          },
        },
      },
    });
  });

  it('reads the default profile of the file when no profile is named', () => {
    expect(resolveConnectionConfig({ env: { TEMPORAL_CONFIG_FILE: configFile } }).address).toBe(
      'default.example:7233',
    );
  });

  it('puts TEMPORAL_* variables over the profile, and explicit options over both', () => {
    const env = {
      TEMPORAL_CONFIG_FILE: configFile,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_ADDRESS: 'env.example:7233',
      TEMPORAL_API_KEY: 'env-key',
      TEMPORAL_TLS_SERVER_NAME: 'env.internal',
    };
    const fromEnv = resolveConnectionConfig({ env });
    expect(fromEnv.address).toBe('env.example:7233');
    expect(fromEnv.namespace).toBe('prod-ns');
    expect(fromEnv.connectionOptions.apiKey).toBe('env-key');
    expect(fromEnv.connectionOptions.tls).toMatchObject({ serverNameOverride: 'env.internal' });

    const explicit = resolveConnectionConfig({
      env,
      address: 'flag.example:7233',
      namespace: 'flag-ns',
      apiKey: 'flag-key',
      tls: { serverName: 'flag.internal', serverCACert: { data: 'flag CA' } },
    });
    expect(explicit.address).toBe('flag.example:7233');
    expect(explicit.namespace).toBe('flag-ns');
    expect(explicit.connectionOptions).toMatchObject({
      address: 'flag.example:7233',
      apiKey: 'flag-key',
      tls: {
        serverNameOverride: 'flag.internal',
        serverRootCACertificate: bytes('flag CA'),
        // Settings the flags do not name still come from the profile.
        clientCertPair: { crt: bytes('-----BEGIN cert.pem-----\n') },
      },
    });
  });

  it('picks the profile an explicit option names over TEMPORAL_PROFILE, and the file too', () => {
    const other = path.join(dir, 'other.toml');
    writeFileSync(other, '[profile.staging]\naddress = "staging.example:7233"\n');
    const config = resolveConnectionConfig({
      env: { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' },
      configFile: other,
      profile: 'staging',
    });
    expect(config.address).toBe('staging.example:7233');
    expect(config.connectionOptions.tls).toBeUndefined();
  });

  it('turns TLS on for an API key, as the SDK does, unless TLS is disabled', () => {
    expect(resolveConnectionConfig({ env: { TEMPORAL_API_KEY: 'k' } }).connectionOptions).toEqual({
      address: 'localhost:7233',
      apiKey: 'k',
      tls: true,
    });
    expect(resolveConnectionConfig({ apiKey: 'k', env: {} }).connectionOptions.tls).toBe(true);
    expect(
      resolveConnectionConfig({ env: { TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' } }).connectionOptions
        .tls,
    ).toBe(false);
    expect(resolveConnectionConfig({ apiKey: 'k', tls: false, env: {} }).connectionOptions.tls).toBe(false);
  });

  it('takes certificates as data as well as paths', () => {
    const config = resolveConnectionConfig({
      env: {
        TEMPORAL_TLS_CLIENT_CERT_DATA: 'cert data',
        TEMPORAL_TLS_CLIENT_KEY_DATA: 'key data',
        TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'ca data',
      },
    });
    expect(config.connectionOptions.tls).toEqual({
      serverRootCACertificate: bytes('ca data'),
      clientCertPair: { crt: bytes('cert data'), key: bytes('key data') },
    });
  });

  it('fails in one line for a missing profile, a missing certificate file, or a certificate without its key', () => {
    const failure = (run: () => unknown) => {
      try {
        run();
      } catch (err) {
        expect(err).toBeInstanceOf(ConnectionConfigError);
        return (err as Error).message;
      }
      throw new Error('did not fail');
    };
    expect(
      failure(() => resolveConnectionConfig({ env: { TEMPORAL_CONFIG_FILE: configFile }, profile: 'nope' })),
    ).toBe("cannot use the Temporal connection settings: Profile 'nope' not found in config data");
    expect(
      failure(() =>
        resolveConnectionConfig({ env: {}, tls: { serverCACert: { path: path.join(dir, 'none.pem') } } }),
      ),
    ).toBe(
      `cannot use the Temporal connection settings: ENOENT: no such file or directory, open '${path.join(dir, 'none.pem')}'`,
    );
    expect(failure(() => resolveConnectionConfig({ env: { TEMPORAL_TLS_CLIENT_CERT_PATH: certPath } }))).toBe(
      'cannot use the Temporal connection settings: a TLS client certificate and its key must be given together',
    );
  });
});

describe('connectionTarget (the CLI flags)', () => {
  it('leaves everything unset without flags, so the environment and profile decide', () => {
    expect(connectionTarget({})).toEqual({
      address: undefined,
      namespace: undefined,
      profile: undefined,
      configFile: undefined,
      apiKey: undefined,
      tls: undefined,
    });
  });

  it('turns TLS on with --tls, and with any --tls-* flag as that setting', () => {
    expect(connectionTarget({ tls: true }).tls).toBe(true);
    expect(connectionTarget({ tlsCaPath: '/ca.pem', tlsServerName: 'x' }).tls).toEqual({
      serverCACert: { path: '/ca.pem' },
      clientCert: undefined,
      clientKey: undefined,
      serverName: 'x',
    });
  });
});
