/**
 * Each session's own network (src/command-host/containment/session-networks.ts), for real: namespaces, slirp4netns
 * and servers, on a worker host's network the test makes (test/helpers/test-networks.ts).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionNetworks } from '../../../src/command-host/containment/session-networks.js';
import { temporalAddresses } from '../../../src/command-host/containment/temporal-addresses.js';
import { processStart } from '../../../src/command-host/supervisor/process-identity.js';
import { supervisorPath } from '../../../src/command-host/supervisor/supervisor.js';
import { processesMatching } from '../../helpers/processes.js';
import {
  HOST_ADDRESS,
  INTERNET_ADDRESS,
  inNs,
  makeTestNetworks,
  type TestNetworks,
} from '../../helpers/test-networks.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sessions-net-'));
let test: TestNetworks;
let hostNs: string;
let internetNs: string;
let networks: SessionNetworks;
/** Networks made with other options, ended after the tests. */
const others: SessionNetworks[] = [];

const serve = (netns: string, host: string, port: number, name: string) =>
  test.serve(netns, host, port, name);

/** What a connection from the namespace to host:port reads, or the error that ended it. */
function connectFrom(netns: string, host: string, port: number): string {
  const code = `const s = require('net').connect(${port}, '${host}'); let got = '';
    s.setTimeout(3000, () => { console.log('timed out'); process.exit(0); });
    s.on('data', (d) => { got += d; }); s.on('end', () => { console.log(got); process.exit(0); });
    s.on('error', (e) => { console.log(e.code); process.exit(0); });`;
  const ran = spawnSync('nsenter', [`--net=${netns}`, process.execPath, '-e', code], { encoding: 'utf8' });
  return ran.stdout.trim();
}

beforeAll(async () => {
  test = await makeTestNetworks();
  ({ hostNs, internetNs } = test);
  networks = new SessionNetworks({ dir: path.join(dir, 'sessions'), egressNetns: hostNs });
});

afterAll(async () => {
  for (const made of [networks, ...others])
    for (const session of made?.sessions() ?? []) made.release(session);
  await test?.end();
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
    // Never the host's loopback (where the Temporal server listens), by any address: slirp4netns
    // refuses it, and the host's own address is routed away.
    const refused = /^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|timed out)$/;
    for (const address of ['127.0.0.1', '10.0.2.2'])
      expect({ address, got: connectFrom(a.netns, address, 7233) }).toEqual({
        address,
        got: expect.stringMatching(refused),
      });
    expect(connectFrom(a.netns, HOST_ADDRESS, 7233)).toBe('EACCES');
  });

  it('is the same network for every command of the session, and comes back if its slirp4netns died', async () => {
    const first = await networks.ensure('aaaaaaaa');
    const again = await networks.ensure('aaaaaaaa');
    expect(again.netns).toBe(first.netns);
    const record = JSON.parse(
      spawnSync('cat', [path.join(dir, 'sessions', 'aaaaaaaa.net.json')], { encoding: 'utf8' }).stdout,
    ) as { slirp: { pid: number; start: number } };
    expect(processStart(record.slirp.pid)).toBe(record.slirp.start);
    process.kill(record.slirp.pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const remade = await networks.ensure('aaaaaaaa');
    expect(connectFrom(remade.netns, '198.51.100.2', 8080)).toBe('hello from the internet');
  });
});

describe("what a session's network refuses", () => {
  /** The Temporal server's host and a metadata service: other hosts of the network, each serving. */
  const TEMPORAL_HOST = '198.51.100.3';
  const METADATA_ADDRESS = '169.254.169.254';
  let refusing: SessionNetworks;
  const routes = (netns: string) => inNs(netns, 'ip route; ip -6 route').trim().split('\n');

  beforeAll(async () => {
    inNs(internetNs, `ip addr add ${TEMPORAL_HOST}/24 dev v1 && ip addr add ${METADATA_ADDRESS}/32 dev lo`);
    inNs(hostNs, `ip route add ${METADATA_ADDRESS}/32 via ${INTERNET_ADDRESS}`);
    await serve(internetNs, TEMPORAL_HOST, 7233, 'the temporal server');
    await serve(internetNs, METADATA_ADDRESS, 80, 'the metadata service');
    await serve(hostNs, HOST_ADDRESS, 8081, 'the host address service');
    refusing = new SessionNetworks({
      dir: path.join(dir, 'refusing'),
      egressNetns: hostNs,
      temporal: temporalAddresses(`${TEMPORAL_HOST}:7233`),
    });
    others.push(refusing);
  });

  it("the Temporal server's addresses, the host's own, link-local and metadata ones; the rest stays reachable", async () => {
    const { netns } = await refusing.ensure('abcdabcd');
    expect(connectFrom(netns, TEMPORAL_HOST, 7233)).toBe('EACCES');
    expect(connectFrom(netns, HOST_ADDRESS, 8081)).toBe('EACCES');
    expect(connectFrom(netns, METADATA_ADDRESS, 80)).toBe('EACCES');
    expect(connectFrom(netns, 'fd00:ec2::254', 80)).toBe('EACCES');
    expect(connectFrom(netns, INTERNET_ADDRESS, 8080)).toBe('hello from the internet');
    // Each a route of type prohibit: the host's own address as its namespace had it, and, the traffic
    // leaving from a namespace of its own, this process's own addresses (the worker host's) too.
    const own = Object.values(os.networkInterfaces())
      .flatMap((addresses) => addresses ?? [])
      .filter((address) => !address.internal && !address.address.startsWith('fe80:'));
    expect([...routes(netns)].sort()).toEqual(
      [
        'default via 10.0.2.2 dev tap0 ',
        '10.0.2.0/24 dev tap0 proto kernel scope link src 10.0.2.100 ',
        'prohibit 169.254.0.0/16 proto static ',
        `prohibit ${HOST_ADDRESS} proto static `,
        `prohibit ${TEMPORAL_HOST} proto static `,
        'prohibit fd00:ec2::254 dev lo proto static metric 1024 pref medium',
        'fe80::/64 dev tap0 proto kernel metric 256 pref medium',
        ...own.map(({ address, family }) =>
          family === 'IPv6'
            ? `prohibit ${address} dev lo proto static metric 1024 pref medium`
            : `prohibit ${address} proto static `,
        ),
      ].sort(),
    );
  });

  it('in a network a restarted worker finds, made before the refusals', async () => {
    const { netns } = await refusing.ensure('dcbadcba');
    // As a worker before the refusals left it: no route but its own.
    inNs(
      netns,
      `ip route del 169.254.0.0/16 && ip route del ${HOST_ADDRESS} && ip route del ${TEMPORAL_HOST}`,
    );
    expect(connectFrom(netns, METADATA_ADDRESS, 80)).toBe('hello from the metadata service');
    const restarted = new SessionNetworks({
      dir: path.join(dir, 'refusing'),
      egressNetns: hostNs,
      temporal: temporalAddresses(`${TEMPORAL_HOST}:7233`),
    });
    expect((await restarted.ensure('dcbadcba')).netns).toBe(netns);
    expect(connectFrom(netns, METADATA_ADDRESS, 80)).toBe('EACCES');
    expect(connectFrom(netns, TEMPORAL_HOST, 7233)).toBe('EACCES');
    expect(connectFrom(netns, HOST_ADDRESS, 8081)).toBe('EACCES');
  });

  it("names them in the worker's start line", () => {
    expect(refusing.summary).toBe(
      `the session's own network without the host's loopback, its own addresses, the Temporal server's (${TEMPORAL_HOST}) or link-local and metadata addresses`,
    );
    expect(networks.summary).toBe(
      "the session's own network without the host's loopback, its own addresses or link-local and metadata addresses",
    );
    const allowing = new SessionNetworks({
      dir: path.join(dir, 'summary'),
      allowedPorts: [5432, 6379],
      temporal: temporalAddresses('[fd00::5]:7233'),
    });
    expect(allowing.summary).toBe(
      "the session's own network reaching the host's loopback only at ports 5432, 6379, without the host's own addresses, the Temporal server's (fd00::5) or link-local and metadata addresses",
    );
    const closed = new SessionNetworks({
      dir: path.join(dir, 'summary'),
      egress: false,
      allowedPorts: [5432],
    });
    expect(closed.summary).toBe(
      "the session's own localhost and no way out, reaching the host's loopback only at port 5432",
    );
  });
});

describe("where a session's namespace lives", () => {
  const mounts = () => readFileSync('/proc/self/mountinfo', 'utf8').trim().split('\n');

  it('in a process of its own, not a mount of the host, which every launch would copy', async () => {
    const before = mounts();
    const held = await networks.ensure('eeeeeeee');
    const record = JSON.parse(readFileSync(path.join(dir, 'sessions', 'eeeeeeee.net.json'), 'utf8')) as {
      holder: { pid: number; start: number };
    };
    expect(held.netns).toBe(`/proc/${record.holder.pid}/ns/net`);
    expect(mounts()).toEqual(before);
    // Its holder gone, the next command gets a network again.
    process.kill(record.holder.pid, 'SIGKILL');
    await waitFor(() => processStart(record.holder.pid) !== record.holder.start);
    const remade = await networks.ensure('eeeeeeee');
    expect(remade.netns).not.toBe(held.netns);
    expect(connectFrom(remade.netns, '198.51.100.2', 8080)).toBe('hello from the internet');
    networks.release('eeeeeeee');
    expect(mounts()).toEqual(before);
  });

  it("in its file still, where a worker before 0.3.0 kept it: that session's tasks keep their network", async () => {
    const legacyDir = path.join(dir, 'legacy');
    const legacy = new SessionNetworks({ dir: legacyDir, egress: false });
    others.push(legacy);
    // As 0.2.0 left a session with no way out: its namespace bound on a file, and a record.
    const file = path.join(legacyDir, 'ffffffff.netns');
    writeFileSync(file, '');
    expect(spawnSync('unshare', [`--net=${file}`, 'ip', 'link', 'set', 'lo', 'up']).status).toBe(0);
    writeFileSync(path.join(legacyDir, 'ffffffff.net.json'), '{}\n');
    await serve(file, '127.0.0.1', 3000, 'a task started before the upgrade');
    const { netns } = await legacy.ensure('ffffffff');
    expect(netns).toBe(file);
    expect(connectFrom(netns, '127.0.0.1', 3000)).toBe('hello from a task started before the upgrade');
    legacy.release('ffffffff');
    expect(existsSync(file)).toBe(false);
    expect(mounts().filter((line) => line.includes(legacyDir))).toEqual([]);
  });
});

describe('a network its worker never recorded (SIGKILLed while making it)', () => {
  it('is ended, holder, slirp4netns and relay, once older than the age given, and only its own', async () => {
    // The holder runs a private copy of the supervisor, as a worker's do (`<spill>/.bin/`).
    const bin = path.join(dir, 'orphan-bin');
    mkdirSync(bin);
    const supervisor = path.join(bin, 'durable-bash-supervisor');
    copyFileSync(supervisorPath(), supervisor);
    chmodSync(supervisor, 0o700);
    const orphans = new SessionNetworks({
      dir: path.join(dir, 'orphans'),
      egressNetns: hostNs,
      supervisor,
      allowedPorts: [18088],
    });
    const kept = await networks.ensure('abababab');
    const made = await orphans.ensure('cdcdcdcd');
    const joined = () => processesMatching(new RegExp(`/proc/${made.holderPid}/ns/`));
    expect(joined().length).toBeGreaterThanOrEqual(2); // its slirp4netns and its relay
    // The worker died before the record: nothing names these processes now.
    rmSync(path.join(dir, 'orphans', 'cdcdcdcd.net.json'));
    expect(orphans.endUnrecorded(60_000)).toBe(0); // A live worker may be about to record it.
    expect(orphans.endUnrecorded(0)).toBe(1);
    await waitFor(() => !existsSync(`/proc/${made.holderPid}`) && joined().length === 0);
    // Another directory's network, recorded, is untouched.
    expect(existsSync(`/proc/${kept.holderPid}`)).toBe(true);
    networks.release('abababab');
  });
});

describe('what an operator chooses for sessions', () => {
  it('allows a loopback service of the host by port, and no other', async () => {
    await serve(hostNs, '127.0.0.1', 5432, 'the allowed database');
    const allowing = new SessionNetworks({
      dir: path.join(dir, 'allowing'),
      egressNetns: hostNs,
      allowedPorts: [5432],
    });
    others.push(allowing);
    const { netns } = await allowing.ensure('cccccccc');
    // Reached as the host's own programs reach it, at localhost, by every connection.
    expect(connectFrom(netns, '127.0.0.1', 5432)).toBe('hello from the allowed database');
    expect(connectFrom(netns, '127.0.0.1', 5432)).toBe('hello from the allowed database');
    expect(connectFrom(netns, '127.0.0.1', 7233)).toBe('ECONNREFUSED');
    expect(connectFrom(netns, '10.0.2.2', 7233)).toMatch(/^(ECONNREFUSED|ENETUNREACH|timed out)$/);
    expect(connectFrom(netns, '198.51.100.2', 8080)).toBe('hello from the internet');
    // The relay runs as nobody; it ends with the session's network.
    const record = JSON.parse(readFileSync(path.join(dir, 'allowing', 'cccccccc.net.json'), 'utf8')) as {
      relay: { pid: number; start: number };
    };
    expect(readFileSync(`/proc/${record.relay.pid}/status`, 'utf8')).toMatch(
      /^Uid:\t65534\t65534\t65534\t65534$/m,
    );
    allowing.release('cccccccc');
    await waitFor(() => processStart(record.relay.pid) !== record.relay.start);
  });

  it('turns the way out off: the session keeps its localhost and nothing else', async () => {
    const closed = new SessionNetworks({ dir: path.join(dir, 'closed'), egressNetns: hostNs, egress: false });
    others.push(closed);
    const { netns } = await closed.ensure('dddddddd');
    await serve(netns, '127.0.0.1', 3000, 'session d');
    expect(connectFrom(netns, '127.0.0.1', 3000)).toBe('hello from session d');
    expect(connectFrom(netns, '198.51.100.2', 8080)).toBe('ENETUNREACH');
    expect(connectFrom(netns, '127.0.0.1', 7233)).toBe('ECONNREFUSED');
    expect(closed.sessions()).toEqual(['dddddddd']);
  });
});

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(done()).toBe(true);
}
