/**
 * DNS-rebinding protection for the MCP server over HTTP. A request's Host (and Origin, when sent)
 * must name the server as a client on the connection's own path would: the address the connection
 * came in on, the listen host when the operator gave a name, and, only on a connection that came in
 * over loopback, `localhost`, `127.0.0.1`, `[::1]` and the listen host. A page whose name an
 * attacker points at the server sends that name, and is refused; a client over the network that
 * sends `Host: localhost` to a server listening on every address is refused too.
 */
import type { IncomingMessage } from 'node:http';
import net from 'node:net';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Whether a listen host (`127.0.0.1`, `[::1]`, `localhost`, `0.0.0.0`, a name) takes connections
 * from this machine only. Another name counts as not: it may resolve to any address.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || isLoopbackAddress(bare);
}

/** The check of each request's Host and Origin: why it is refused, or undefined. */
export function hostCheck(listenHost: string): (req: IncomingMessage) => string | undefined {
  const listenName = hostname(`http://${listenHost}`) ?? listenHost;
  const givenName = net.isIP(listenHost.replace(/^\[|\]$/g, '')) === 0 ? [listenName] : [];
  return (req) => {
    const local = req.socket.localAddress ?? '';
    const names = new Set([addressName(local), ...givenName]);
    if (isLoopbackAddress(local)) for (const name of [...LOOPBACK_NAMES, listenName]) names.add(name);
    const expected = `expected a name of this server on this connection (${[...names].join(', ')})`;
    const host = req.headers.host;
    if (!names.has(hostname(`http://${host ?? ''}`) ?? ''))
      return `invalid Host header: ${expected}, got ${host ?? 'none'}`;
    const origin = req.headers.origin;
    if (origin !== undefined && !names.has(hostname(origin) ?? ''))
      return `invalid Origin header: ${expected}, got ${origin}`;
    return undefined;
  };
}

function isLoopbackAddress(address: string): boolean {
  const v4 = address.replace(/^::ffff:/i, '');
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  return net.isIPv6(address) && hostname(`http://[${address}]`) === '[::1]';
}

/** A socket's address as a Host header names it (an IPv4-mapped address as IPv4, IPv6 in brackets). */
function addressName(address: string): string {
  const v4 = address.replace(/^::ffff:/i, '');
  if (net.isIPv4(v4)) return v4;
  return hostname(`http://[${address}]`) ?? address;
}

/** A URL's host name as WHATWG URL normalizes it (lower case, IPv6 compressed in brackets). */
function hostname(url: string): string | undefined {
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}
