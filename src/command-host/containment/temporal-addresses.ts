/**
 * The Temporal server's addresses, which sessions' networks refuse (docs/CONTAINMENT.md, "The
 * network"): a command that reached the server could approve its own requests or end any task.
 * With the address the worker was configured with (`host:port`), every address its host resolves
 * to when the worker starts; without it (a connection the worker did not make, as
 * `NativeConnection.connect`), the address of every server this process is connected to then,
 * the Temporal server's among them. An address the server gains later is refused only once the
 * worker restarts. Loopback addresses are left out: a session never reaches the host's loopback.
 */
import { lookup } from 'node:dns/promises';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { isIP, SocketAddress } from 'node:net';
import { endianness } from 'node:os';

export interface TemporalAddresses {
  /** The server as the worker's start line names it: its host as configured, else the addresses found. */
  readonly shown: readonly string[];
  /** Each address as a prefix of its whole length (`/32`, `/128`), resolved once; a failure is tried again at the next call. */
  prefixes(): Promise<readonly string[]>;
}

/** Starts resolving at once (the worker's start), so a session's first command does not wait for it. */
export function temporalAddresses(configured: string | undefined): TemporalAddresses {
  const host = configured === undefined ? undefined : hostOf(configured);
  const connected = host === undefined ? connectedServers() : [];
  const shown = host === undefined ? connected : isLoopback(host) ? [] : [host];
  let resolving: Promise<readonly string[]> | undefined;
  const resolve = async (): Promise<readonly string[]> => {
    if (host === undefined || isIP(host) !== 0) return wholePrefixes(host === undefined ? connected : [host]);
    try {
      return wholePrefixes((await lookup(host, { all: true })).map(({ address }) => address));
    } catch (err) {
      throw new Error(
        `cannot resolve the Temporal server's host ${host}, whose addresses sessions' networks refuse: ${(err as Error).message}`,
      );
    }
  };
  const prefixes = () => {
    resolving ??= resolve().catch((err: unknown) => {
      resolving = undefined;
      throw err;
    });
    return resolving;
  };
  // Unheard here: a launch that needs the addresses hears the failure, and tries again.
  prefixes().catch(() => undefined);
  return { shown, prefixes };
}

/** The host of `host:port`, `[v6]:port`, a bare host or a bare IPv6 address. */
function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1] as string;
  if (isIP(address) === 6) return address;
  const colon = address.lastIndexOf(':');
  return colon < 0 ? address : address.slice(0, colon);
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const address = unmapped(host);
  return address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));
}

/** An IPv4 address as an IPv6 socket shows it (`::ffff:10.0.0.5`), as itself. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? (mapped[1] as string) : address;
}

function wholePrefixes(addresses: readonly string[]): string[] {
  const kept = addresses.map(unmapped).filter((address) => !isLoopback(address));
  return [...new Set(kept)].map((address) => `${address}/${isIP(address) === 4 ? 32 : 128}`);
}

/** Socket states as /proc/net/tcp writes them (the kernel's include/net/tcp_states.h, in hex). */
const TCP_ESTABLISHED = '01';
const TCP_LISTEN = '0A';

/**
 * The servers this process holds a TCP connection to: its sockets (`/proc/self/fd`) in the
 * kernel's tables, less the connections that came in to a port it listens on.
 */
function connectedServers(): string[] {
  const own = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode !== undefined) own.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const sockets = [...tcpTable('/proc/self/net/tcp'), ...tcpTable('/proc/self/net/tcp6')].filter((socket) =>
    own.has(socket.inode),
  );
  const listening = new Set(sockets.filter((s) => s.state === TCP_LISTEN).map((s) => s.localPort));
  const servers = sockets
    .filter((s) => s.state === TCP_ESTABLISHED && !listening.has(s.localPort))
    .map((s) => unmapped(s.remote))
    .filter((address) => !isLoopback(address));
  return [...new Set(servers)];
}

/** The rows of /proc/net/tcp or tcp6: addresses in hex, each 32-bit word in the host's byte order. */
function tcpTable(file: string): { localPort: string; remote: string; state: string; inode: string }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // No IPv6 in this kernel.
  }
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [, local = '', remote = '', state = '', , , , , , inode = ''] = line.trim().split(/\s+/);
      return {
        localPort: local.split(':')[1] ?? '',
        remote: addressOf(remote.split(':')[0] ?? ''),
        state,
        inode,
      };
    });
}

/** An address as the kernel's table writes it: each 32-bit word in this machine's byte order. */
function addressOf(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  if (endianness() === 'LE') bytes.swap32();
  if (bytes.length === 4) return bytes.join('.');
  const words = [];
  for (let i = 0; i < 16; i += 2) words.push(bytes.readUInt16BE(i).toString(16));
  return new SocketAddress({ address: words.join(':'), family: 'ipv6' }).address;
}
