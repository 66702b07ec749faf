/**
 * A worker host's network made for a test, never the machine's own (no address, route or firewall
 * of the host changes): a namespace "host" with services on its loopback, joined by a veth pair to
 * a namespace "internet" with servers on 198.51.100.2. Sessions' traffic leaves from "host"
 * (`egressNetns`), so "the host's loopback" of a test is the loopback of "host".
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const INTERNET_ADDRESS = '198.51.100.2';

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

export function makeTestNetworks(): TestNetworks {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-netns-'));
  const hostNs = path.join(dir, 'host.netns');
  const internetNs = path.join(dir, 'internet.netns');
  const servers: ChildProcess[] = [];
  for (const file of [hostNs, internetNs]) {
    writeFileSync(file, '');
    inNs('/proc/self/ns/net', `unshare --net=${file} true`);
  }
  inNs(
    hostNs,
    `ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v1 netns ${internetNs}`,
  );
  inNs(hostNs, 'ip addr add 198.51.100.1/24 dev v0 && ip link set v0 up');
  inNs(internetNs, `ip link set lo up && ip addr add ${INTERNET_ADDRESS}/24 dev v1 && ip link set v1 up`);
  return {
    hostNs,
    internetNs,
    async serve(netns, host, port, name) {
      servers.push(await serveHello(host, port, name, netns));
    },
    async end() {
      for (const server of servers) {
        server.kill('SIGKILL');
        if (server.exitCode === null && server.signalCode === null) await once(server, 'exit');
      }
      for (const file of [hostNs, internetNs]) spawnSync('umount', [file]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
