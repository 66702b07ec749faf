/**
 * A worker host's network made for a test, never the machine's own (no address, route or firewall
 * of the host changes): a namespace "host" with services on its loopback, joined by a veth pair to
 * a namespace "internet" with servers on 198.51.100.2. Sessions' traffic leaves from "host"
 * (`egressNetns`, or a worker run in it), so "the host's loopback" of a test is the loopback of
 * "host", and its own address 198.51.100.1. A Temporal server may run in either (`startTemporalIn`).
 *
 * Each namespace is held by a process of the test's (`unshare --net`), named by its /proc path:
 * not a file bind-mounted on the host, since every session's bubblewrap copies the host's mounts,
 * and one unmounted in the middle of that copy fails another test's launch.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { dynamicConfigArgs } from '../../src/dev-server/dynamic-config.js';
import { searchAttributeNames } from '../../src/shared/search-attributes.js';
import { waitFor } from './processes.js';

export const INTERNET_ADDRESS = '198.51.100.2';
/** The address of "host" on the link to "internet": the worker host's own, not its loopback. */
export const HOST_ADDRESS = '198.51.100.1';

export interface TestNetworks {
  hostNs: string;
  internetNs: string;
  /** A TCP server in a namespace that answers `hello from <name>`; resolves once it listens. */
  serve(netns: string, host: string, port: number, name: string): Promise<void>;
  /** Ends the servers and the namespaces. */
  end(): Promise<void>;
}

/** A command line that connects to `host:port` and prints what it read, or why it failed in one word (`ECONNREFUSED`, `timeout`). */
export const connectCommand = (host: string, port: number) =>
  `python3 -c "
import errno, socket
try:
    s = socket.create_connection(('${host}', ${port}), timeout=3); print(s.recv(100).decode())
except OSError as e:
    print(errno.errorcode.get(e.errno, 'timeout'))"`;

/** Runs a shell line in a namespace; throws with its stderr when it fails. */
export function inNs(netns: string, line: string): string {
  const ran = spawnSync('nsenter', [`--net=${netns}`, 'sh', '-c', line], { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`${line}: ${ran.stderr}`);
  return ran.stdout;
}

/** A TCP server on `host:port` that answers `hello from <name>`, in `netns` (else this process's network); resolves once it listens. */
export async function serveHello(
  host: string,
  port: number,
  name: string,
  netns?: string,
): Promise<ChildProcess> {
  const code = `require('net').createServer((s) => s.end('hello from ${name}')).listen(${port}, '${host}', () => console.log('up'))`;
  const [file, args] =
    netns === undefined
      ? [process.execPath, ['-e', code]]
      : ['nsenter', [`--net=${netns}`, process.execPath, '-e', code]];
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout as NodeJS.ReadableStream, 'data');
  return child;
}

/** A network namespace held by a process of its own (until it is killed), by its /proc path. */
export async function heldNamespace(): Promise<{ netns: string; holder: ChildProcess }> {
  const holder = spawn('unshare', ['--net', '--', 'sh', '-c', 'echo up; exec sleep infinity'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(holder.stdout as NodeJS.ReadableStream, 'data');
  return { netns: `/proc/${holder.pid}/ns/net`, holder };
}

/**
 * A Temporal dev server (in memory, no Web UI) in `netns`, reached at `host:port` there; resolves
 * once it answers. It listens on every address of `netns`: its own services dial each other at
 * 127.0.0.1, so bound to `host` alone they never start. The caller kills it.
 */
export async function startTemporalIn(netns: string, host: string, port: number): Promise<ChildProcess> {
  const binary = findTemporalBinary(TemporalBinary.cli);
  if (binary.kind === 'download') throw new Error('no temporal binary: run npm run provision');
  const server = spawn(
    'nsenter',
    [
      `--net=${netns}`,
      binary.path,
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '0.0.0.0',
      '--port',
      String(port),
      '--log-level',
      'error',
      ...searchAttributeNames.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
      ...dynamicConfigArgs(),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const health = () =>
    spawnSync('nsenter', [
      `--net=${netns}`,
      binary.path,
      'operator',
      'cluster',
      'health',
      '--address',
      `${host}:${port}`,
    ]).status === 0;
  await waitFor(() => health() || server.exitCode !== null, 60_000);
  if (server.exitCode !== null)
    throw new Error(`the Temporal dev server in ${netns} exited (${server.exitCode})`);
  return server;
}

export async function makeTestNetworks(): Promise<TestNetworks> {
  const host = await heldNamespace();
  const internet = await heldNamespace();
  const hostNs = host.netns;
  const internetNs = internet.netns;
  const servers: ChildProcess[] = [host.holder, internet.holder];
  inNs(
    hostNs,
    `ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v1 netns ${internet.holder.pid}`,
  );
  inNs(hostNs, `ip addr add ${HOST_ADDRESS}/24 dev v0 && ip link set v0 up`);
  inNs(internetNs, `ip link set lo up && ip addr add ${INTERNET_ADDRESS}/24 dev v1 && ip link set v1 up`);
  return {
    hostNs,
    internetNs,
    async serve(netns, host, port, name) {
      servers.push(await serveHello(host, port, name, netns));
    },
    async end() {
      // The servers, then the namespaces' holders: with them the namespaces and the veth pair go.
      for (const child of servers.reverse()) {
        child.kill('SIGKILL');
        if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      }
    },
  };
}
