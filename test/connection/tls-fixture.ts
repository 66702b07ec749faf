/**
 * Real TLS for the connection tests: a certificate authority, a server certificate and a client
 * certificate made with the openssl CLI in a temporary directory, and a TLS-terminating proxy in
 * front of the dev server (which cannot serve TLS itself) that demands a client certificate.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Duplex } from 'node:stream';
import tls from 'node:tls';

/** The only name in the server certificate: a client must override the server name to reach it by IP. */
export const SERVER_NAME = 'temporal.durable-bash.test';

export interface Certificates {
  dir: string;
  caCertPath: string;
  serverCertPath: string;
  serverKeyPath: string;
  clientCertPath: string;
  clientKeyPath: string;
  /** A client certificate signed by another authority, which the proxy must refuse. */
  strangerCertPath: string;
  strangerKeyPath: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Makes a CA and a key plus certificate signed by it, with the given extensions. */
function issue(dir: string, name: string, ca: string, subject: string, extensions: string): void {
  openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-sha256',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
  ]);
}

function authority(dir: string, name: string): void {
  openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-key',
    `${name}.key`,
    '-subj',
    `/CN=${name}`,
    '-days',
    '2',
    '-sha256',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-out',
    `${name}.crt`,
  ]);
}

/** Makes the certificates in a fresh temporary directory. */
export function makeCertificates(): Certificates {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-tls-'));
  authority(dir, 'ca');
  authority(dir, 'stranger-ca');
  issue(
    dir,
    'server',
    'ca',
    '/CN=temporal',
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:${SERVER_NAME}\n`,
  );
  const clientExtensions =
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n';
  issue(dir, 'client', 'ca', '/CN=durable-bash-worker', clientExtensions);
  issue(dir, 'stranger', 'stranger-ca', '/CN=stranger', clientExtensions);
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caCertPath: file('ca.crt'),
    serverCertPath: file('server.crt'),
    serverKeyPath: file('server.key'),
    clientCertPath: file('client.crt'),
    clientKeyPath: file('client.key'),
    strangerCertPath: file('stranger.crt'),
    strangerKeyPath: file('stranger.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsProxy {
  /** `127.0.0.1:<port>`: TLS with a required client certificate, forwarded to the dev server. */
  address: string;
  /** The request headers of the first HTTP/2 stream of each accepted connection, in order. */
  firstRequestHeaders: http2.IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * Terminates TLS (client certificate required, ALPN h2) and pipes the plain bytes to `upstream`
 * (gRPC is HTTP/2 over TCP, so the raw bytes forward as they are). A passive HTTP/2 parser reads
 * a copy of what each client sends, to record the headers of its first request.
 */
export async function startTlsProxy(certificates: Certificates, upstream: string): Promise<TlsProxy> {
  const [upstreamHost, upstreamPort] = splitAddress(upstream);
  const firstRequestHeaders: http2.IncomingHttpHeaders[] = [];
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      key: readFileSync(certificates.serverKeyPath),
      cert: readFileSync(certificates.serverCertPath),
      ca: readFileSync(certificates.caCertPath),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (client) => {
      sockets.add(client);
      const target = net.connect(upstreamPort, upstreamHost);
      sockets.add(target);
      const tap = recordFirstRequest(firstRequestHeaders);
      client.on('data', (chunk: Buffer) => tap.push(chunk));
      client.pipe(target).pipe(client);
      const end = () => {
        client.destroy();
        target.destroy();
        tap.destroy();
        sockets.delete(client);
        sockets.delete(target);
      };
      client.on('error', end).on('close', end);
      target.on('error', end).on('close', end);
    },
  );
  // A refused handshake (no or a foreign client certificate) is expected here, not a test failure.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    firstRequestHeaders,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A plain HTTP/2 server fed a copy of the client's bytes: its HPACK decoder sees exactly what the
 * real server sees, so the first stream's headers come out decoded. What it answers goes nowhere.
 */
function recordFirstRequest(into: http2.IncomingHttpHeaders[]): Duplex {
  const copy = new Duplex({
    read: () => undefined,
    write: (_chunk, _encoding, done) => done(),
  });
  copy.on('error', () => undefined);
  const parser = http2.createServer();
  let seen = false;
  parser.on('stream', (stream, headers) => {
    if (!seen) into.push(headers);
    seen = true;
    stream.on('error', () => undefined);
  });
  parser.on('sessionError', () => undefined);
  parser.emit('connection', copy);
  return copy;
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}
