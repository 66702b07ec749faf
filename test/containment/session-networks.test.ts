/**
 * Each session's own network (src/activities/session-networks.ts), for real: namespaces, slirp4netns
 * and servers. The worker host's network is one this test makes (never the machine's own: no
 * address, route or firewall of the host changes): a namespace "host" with a service on its
 * loopback, joined by a veth pair to a namespace "internet" with a server on 198.51.100.2.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionNetworks } from '../../src/activities/session-networks.js';
import { processStart } from '../../src/activities/supervisor-records.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-netns-'));
const hostNs = path.join(dir, 'host.netns');
const internetNs = path.join(dir, 'internet.netns');
const servers: ChildProcess[] = [];
let networks: SessionNetworks;

/** Runs a shell line in a namespace; throws with its stderr when it fails. */
function inNs(netns: string, line: string): string {
  const ran = spawnSync('nsenter', [`--net=${netns}`, 'sh', '-c', line], { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`${line}: ${ran.stderr}`);
  return ran.stdout;
}

/** A TCP server in a namespace that answers `hello from <name>`; resolves once it listens. */
async function serve(netns: string, host: string, port: number, name: string): Promise<void> {
  const code = `require('net').createServer((s) => s.end('hello from ${name}')).listen(${port}, '${host}', () => console.log('up'))`;
  const child = spawn('nsenter', [`--net=${netns}`, process.execPath, '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  servers.push(child);
  await once(child.stdout as NodeJS.ReadableStream, 'data');
}

/** What a connection from the namespace to host:port reads, or the error that ended it. */
function connectFrom(netns: string, host: string, port: number): string {
  const code = `const s = require('net').connect(${port}, '${host}'); let got = '';
    s.setTimeout(3000, () => { console.log('timed out'); process.exit(0); });
    s.on('data', (d) => { got += d; }); s.on('end', () => { console.log(got); process.exit(0); });
    s.on('error', (e) => { console.log(e.code); process.exit(0); });`;
  const ran = spawnSync('nsenter', [`--net=${netns}`, process.execPath, '-e', code], { encoding: 'utf8' });
  return ran.stdout.trim();
}

beforeAll(() => {
  for (const file of [hostNs, internetNs]) {
    writeFileSync(file, '');
    inNs('/proc/self/ns/net', `unshare --net=${file} true`);
  }
  inNs(
    hostNs,
    `ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v1 netns ${internetNs}`,
  );
  inNs(hostNs, 'ip addr add 198.51.100.1/24 dev v0 && ip link set v0 up');
  inNs(internetNs, 'ip link set lo up && ip addr add 198.51.100.2/24 dev v1 && ip link set v1 up');
  networks = new SessionNetworks({ dir: path.join(dir, 'sessions'), egressNetns: hostNs });
});

afterAll(async () => {
  for (const server of servers) {
    server.kill('SIGKILL');
    if (server.exitCode === null && server.signalCode === null) await once(server, 'exit');
  }
  networks?.release('aaaaaaaa');
  networks?.release('bbbbbbbb');
  for (const file of [hostNs, internetNs]) spawnSync('umount', [file]);
  rmSync(dir, { recursive: true, force: true });
});

describe("a session's own network", () => {
  it('is shared by its commands, apart from other sessions, reaches out, and never reaches the host loopback', async () => {
    await serve(hostNs, '127.0.0.1', 7233, 'the host loopback');
    await serve(internetNs, '198.51.100.2', 8080, 'the internet');
    const a = await networks.ensure('aaaaaaaa');
    const b = await networks.ensure('bbbbbbbb');
    expect(a.netns).not.toBe(b.netns);
    // One session's server on its localhost: its next command reaches it, another session's does not.
    await serve(a.netns, '127.0.0.1', 3000, 'session a');
    expect(connectFrom(a.netns, '127.0.0.1', 3000)).toBe('hello from session a');
    expect(connectFrom(b.netns, '127.0.0.1', 3000)).toBe('ECONNREFUSED');
    // Out to the internet, as the host would.
    expect(connectFrom(a.netns, '198.51.100.2', 8080)).toBe('hello from the internet');
    expect(connectFrom(b.netns, '198.51.100.2', 8080)).toBe('hello from the internet');
    // Never the host's loopback (where the Temporal server listens), by any address.
    const refused = /^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|timed out)$/;
    for (const address of ['127.0.0.1', '10.0.2.2', '198.51.100.1'])
      expect({ address, got: connectFrom(a.netns, address, 7233) }).toEqual({
        address,
        got: expect.stringMatching(refused),
      });
  });

  it('is the same network for every command of the session, and comes back if its slirp4netns died', async () => {
    const first = await networks.ensure('aaaaaaaa');
    const again = await networks.ensure('aaaaaaaa');
    expect(again.netns).toBe(first.netns);
    const record = JSON.parse(
      spawnSync('cat', [path.join(dir, 'sessions', 'aaaaaaaa.net.json')], { encoding: 'utf8' }).stdout,
    ) as { slirpPid: number; slirpStart: number };
    expect(processStart(record.slirpPid)).toBe(record.slirpStart);
    process.kill(record.slirpPid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const remade = await networks.ensure('aaaaaaaa');
    expect(connectFrom(remade.netns, '198.51.100.2', 8080)).toBe('hello from the internet');
  });
});
