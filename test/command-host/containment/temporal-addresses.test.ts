/**
 * The Temporal server's addresses sessions' networks refuse (src/command-host/containment/temporal-addresses.ts):
 * the configured host, by every address it resolves to, or the servers the worker is connected to.
 * Each case that needs a name or a connection runs in a process of its own, on the built package:
 * a name in a private /etc/hosts (its own mount namespace), connections on a worker host's network
 * made for the test (test/helpers/test-networks.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporalAddresses } from '../../../src/command-host/containment/temporal-addresses.js';
import {
  HOST_ADDRESS,
  INTERNET_ADDRESS,
  inNs,
  makeTestNetworks,
  type TestNetworks,
} from '../../helpers/test-networks.js';

const built = path.resolve('dist/command-host/containment/temporal-addresses.js');
let nets: TestNetworks;
const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-temporal-addresses-'));
const children: ChildProcess[] = [];

/** Runs `code` (an ES module with `temporalAddresses` imported) under `wrapper`; resolves with what it printed. */
async function runBuilt(wrapper: string[], code: string): Promise<string> {
  const script = `import { temporalAddresses } from ${JSON.stringify(built)};\n${code}`;
  const child = spawn(
    wrapper[0] as string,
    [...wrapper.slice(1), process.execPath, '--input-type=module', '-e', script],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await once(child, 'exit');
  return out.trim();
}

/** A server in `netns` on `host:port` that holds each connection open; resolves once it listens. */
async function holdConnections(netns: string, host: string, port: number): Promise<void> {
  const code = `require('net').createServer(() => {}).listen(${port}, '${host}', () => console.log('up'))`;
  const child = spawn('nsenter', [`--net=${netns}`, process.execPath, '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await once(child.stdout as NodeJS.ReadableStream, 'data');
}

beforeAll(async () => {
  nets = await makeTestNetworks();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await nets?.end();
  rmSync(dir, { recursive: true, force: true });
});

describe("the Temporal server's addresses", () => {
  it('are the configured address itself when it is one, IPv4 or IPv6', async () => {
    const v4 = temporalAddresses('198.51.100.3:7233');
    expect(v4.shown).toEqual(['198.51.100.3']);
    expect(await v4.prefixes()).toEqual(['198.51.100.3/32']);
    const v6 = temporalAddresses('[2001:db8::3]:7233');
    expect(v6.shown).toEqual(['2001:db8::3']);
    expect(await v6.prefixes()).toEqual(['2001:db8::3/128']);
  });

  it('leave out the host loopback, which a session never reaches', async () => {
    for (const address of ['127.0.0.1:7233', 'localhost:7233', '[::1]:7233']) {
      const loopback = temporalAddresses(address);
      expect({ address, shown: loopback.shown, prefixes: await loopback.prefixes() }).toEqual({
        address,
        shown: [],
        prefixes: [],
      });
    }
  });

  it('are every address a host name resolves to at start', async () => {
    const hosts = path.join(dir, 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n198.51.100.3 temporal.test\n2001:db8::3 temporal.test\n');
    const printed = await runBuilt(
      ['unshare', '--mount', '--', 'sh', '-c', `mount --bind ${hosts} /etc/hosts && exec "$@"`, 'sh'],
      `const addresses = temporalAddresses('temporal.test:7233');
       console.log(JSON.stringify({ shown: addresses.shown, prefixes: [...await addresses.prefixes()].sort() }));`,
    );
    expect(JSON.parse(printed)).toEqual({
      shown: ['temporal.test'],
      prefixes: ['198.51.100.3/32', '2001:db8::3/128'],
    });
  });

  it('are the servers the worker is connected to, without its address, not the clients connected to it', async () => {
    await holdConnections(nets.internetNs, INTERNET_ADDRESS, 9000);
    inNs(nets.internetNs, 'ip addr add 198.51.100.4/24 dev v1');
    // In the worker host's namespace: connected to a server, and listening; once a client from
    // another address has come in, what it finds.
    const found = runBuilt(
      ['nsenter', `--net=${nets.hostNs}`],
      `import { once } from 'node:events';
       import net from 'node:net';
       const connected = once(net.connect(9000, '${INTERNET_ADDRESS}'), 'connect');
       net.createServer(async () => {
         await connected;
         console.log(JSON.stringify(temporalAddresses(undefined).shown));
         process.exit(0);
       }).listen(9100, '${HOST_ADDRESS}');`,
    );
    const client = `const connect = () => require('net').connect({ port: 9100, host: '${HOST_ADDRESS}', localAddress: '198.51.100.4' })
      .on('error', () => setTimeout(connect, 50)); connect();`;
    children.push(
      spawn('nsenter', [`--net=${nets.internetNs}`, process.execPath, '-e', client], { stdio: 'ignore' }),
    );
    expect(JSON.parse(await found)).toEqual([INTERNET_ADDRESS]);
  });
});
