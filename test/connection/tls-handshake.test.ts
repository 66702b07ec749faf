/**
 * The one-line TLS explanation beside a connect, against local TLS servers that misbehave on
 * purpose (no Temporal server needed).
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveConnectionConfig } from '../../src/connection/connection-config.js';
import { connectExplained } from '../../src/connection/tls-handshake.js';
import { type Certificates, makeCertificates, SERVER_NAME } from './tls-fixture.js';

let certs: Certificates;
beforeAll(() => {
  certs = makeCertificates();
});
afterAll(() => certs?.remove());

/** A TLS server that completes the handshake, sends nothing, and hangs up after `hangUpAfterMs`. */
async function hangingUpServer(hangUpAfterMs: number) {
  const hungUp: Promise<unknown>[] = [];
  const server = tls.createServer(
    {
      key: readFileSync(certs.serverKeyPath),
      cert: readFileSync(certs.serverCertPath),
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      socket.on('error', () => undefined);
      hungUp.push(once(socket, 'close'));
      setTimeout(() => socket.destroy(), hangUpAfterMs);
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    hungUp,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Connection settings for TLS to `address`, trusting the test CA. */
function tlsConfig(address: string) {
  return resolveConnectionConfig({
    env: {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCertPath,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    },
  });
}

describe('connectExplained', () => {
  it('keeps a connection the SDK made even when its own handshake is refused later', async () => {
    const server = await hangingUpServer(100);
    try {
      const config = tlsConfig(server.address);
      const connection = { close: vi.fn(async () => undefined) };
      expect(await connectExplained(config, 5_000, async () => connection)).toBe(connection);
      await vi.waitUntil(() => server.hungUp.length === 1);
      await Promise.all(server.hungUp);
      // The probe hears the hang-up at once; give its refusal time to (wrongly) discard.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(connection.close).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  });

  it('refuses in one line, and closes the attempt, when the hang-up comes before the SDK connects', async () => {
    const server = await hangingUpServer(0);
    try {
      const config = tlsConfig(server.address);
      const connection = { close: vi.fn(async () => undefined) };
      let connect: (value: typeof connection) => void = () => undefined;
      const attempt = new Promise<typeof connection>((resolve) => {
        connect = resolve;
      });
      await expect(connectExplained(config, 5_000, () => attempt)).rejects.toThrow(
        `Temporal is unreachable at ${server.address}: TLS handshake failed: the server closed the connection after the handshake (does it require a client certificate?)`,
      );
      connect(connection);
      await vi.waitUntil(() => connection.close.mock.calls.length === 1);
    } finally {
      await server.close();
    }
  });
});
