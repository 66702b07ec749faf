/**
 * Why a TLS connection to Temporal fails, in one line. The SDK's clients retry a refused handshake
 * until their deadline and then say only that they failed, so a connect with TLS on makes one
 * handshake of its own beside them: a refusal (no or an unknown client certificate, a server
 * certificate nobody vouches for, a server that does not speak TLS) fails the connect at once.
 */
import net from 'node:net';
import tls from 'node:tls';
import { firstLine } from '../shared/checks.js';
import { TemporalUnreachableError } from '../shared/errors.js';
import type { ConnectionConfig, TemporalConnectionOptions } from './connection-config.js';

/** The port Temporal's address format implies when an address has none. */
const DEFAULT_PORT = 7233;

/** HTTP/2's client preface and an empty SETTINGS frame: what makes a server answer after the handshake. */
const HTTP2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

/**
 * Connects with `connect`, and with TLS on checks the handshake beside it. Fails with a one-line
 * `TemporalUnreachableError`: the handshake's refusal when there was one, else the SDK's reason.
 * `closeFailed` closes the channel of an attempt that failed, once the SDK has given up on it
 * (grpc-js revives a channel closed while it connects, so a refused attempt is closed at its deadline).
 */
export async function connectExplained<C extends { close(): Promise<void> }>(
  config: ConnectionConfig,
  timeoutMs: number,
  connect: () => Promise<C>,
  closeFailed?: () => void,
  /**
   * The SDK side trusts the system's certificate store (the worker's Rust core), not Node's bundled
   * one: with no CA configured, a certificate only Node cannot verify must not fail the connect,
   * only explain an SDK failure. The server's own refusals still fail it at once.
   */
  sdkUsesSystemRoots = false,
): Promise<C> {
  const attempt = connect();
  // Once the SDK's attempt has connected, what the probe says later (a reset, a hang-up) no longer
  // decides anything: the caller holds that connection, and it must not be closed under them.
  let connected = false;
  attempt.then(
    () => {
      connected = true;
    },
    () => undefined,
  );
  const discard = () => {
    attempt.then((connection) => connection.close(), closeFailed).catch(() => undefined);
  };
  const tlsOptions = config.connectionOptions.tls;
  const probe = tlsOptions ? probeTls(config.connectionOptions, timeoutMs) : Promise.resolve(undefined);
  const refusal = probe.then((verdict) => verdict?.reason);
  const caConfigured = typeof tlsOptions === 'object' && tlsOptions.serverRootCACertificate !== undefined;
  try {
    return await Promise.race([
      attempt,
      probe.then((verdict) => {
        if (verdict === undefined || connected) return attempt;
        if (!verdict.byServer && sdkUsesSystemRoots && !caConfigured) return attempt;
        discard();
        throw new TemporalUnreachableError(config.address, verdict.reason);
      }),
    ]);
  } catch (err) {
    if (err instanceof TemporalUnreachableError) throw err;
    discard();
    const reason = await refusal;
    throw new TemporalUnreachableError(config.address, reason ?? firstLine(err));
  }
}

/**
 * Makes one TLS handshake with the connection's settings and says why the server or this side
 * refused it; undefined when it went through, when the TCP connection itself failed (the SDK says
 * that well), or when nothing was decided within `timeoutMs`.
 */
export function tlsRefusal(
  options: TemporalConnectionOptions,
  timeoutMs: number,
): Promise<string | undefined> {
  return probeTls(options, timeoutMs).then((verdict) => verdict?.reason);
}

/** `tlsRefusal`'s verdict, saying whether the server refused (an alert, a hang-up) or this side did. */
function probeTls(
  options: TemporalConnectionOptions,
  timeoutMs: number,
): Promise<{ reason: string; byServer: boolean } | undefined> {
  const settings = typeof options.tls === 'object' ? options.tls : {};
  const { host, port } = splitAddress(options.address);
  const servername = settings.serverNameOverride ?? (net.isIP(host) ? undefined : host);
  return new Promise((resolve) => {
    let connected = false;
    let secured = false;
    const socket = tls.connect({
      host,
      port,
      ALPNProtocols: ['h2'],
      ...(servername === undefined ? {} : { servername }),
      ...(settings.serverRootCACertificate ? { ca: Buffer.from(settings.serverRootCACertificate) } : {}),
      ...(settings.clientCertPair
        ? { cert: Buffer.from(settings.clientCertPair.crt), key: Buffer.from(settings.clientCertPair.key) }
        : {}),
    });
    const name = servername ?? host;
    const done = (reason: string | undefined, byServer = true) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason === undefined ? undefined : { reason, byServer });
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('connect', () => {
      connected = true;
    });
    // TLS 1.3 finishes the client's side of the handshake before the server checks the client's
    // certificate: only the server's first answer to the preface proves it was accepted. A server
    // that refuses it sends an alert (an error here) or, like Node's, just hangs up.
    socket.once('secureConnect', () => {
      secured = true;
      socket.write(HTTP2_PREFACE);
    });
    socket.once('data', () => done(undefined));
    socket.once('error', (err: Error & { code?: string; reason?: string }) => {
      // OpenSSL's ERR_SSL_* codes are the server's alerts or its non-TLS answer; the others are
      // this side's verdict on the server's certificate.
      const byServer = err.code?.startsWith('ERR_SSL_') ?? false;
      if (!connected) done(undefined);
      else if (err.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
        done(`TLS handshake failed: the server's certificate is not valid for ${name}`, false);
      else done(`TLS handshake failed: ${err.reason ?? err.message}`, byServer);
    });
    socket.once('close', () =>
      done(
        secured
          ? `TLS handshake failed: the server closed the connection after the handshake${settings.clientCertPair ? ' (does it trust this client certificate?)' : ' (does it require a client certificate?)'}`
          : undefined,
      ),
    );
  });
}

function splitAddress(address: string): { host: string; port: number } {
  const match = /^(?:\[(?<v6>[^\]]+)\]|(?<host>[^:]+))(?::(?<port>\d+))?$/.exec(address);
  const host = match?.groups?.v6 ?? match?.groups?.host ?? address;
  return { host, port: match?.groups?.port ? Number(match.groups.port) : DEFAULT_PORT };
}
