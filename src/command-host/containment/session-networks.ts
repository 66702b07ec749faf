/**
 * Each session's own network (docs/CONTAINMENT.md, "Sessions apart"): a network namespace that the
 * session's commands share, so a server one command starts on localhost is reachable from the
 * session's next command, and no other session's is. Its way out is slirp4netns, a user-mode TCP/IP
 * stack that opens connections from the worker host as any program there does, except to the
 * host's loopback (`--disable-host-loopback`): the Temporal server and every other service that
 * listens only on the host's 127.0.0.1 stay out of reach, while the internet does not. Nor does it
 * reach the control plane by another address: the supervisor's `--session-net` routes away (a
 * route of type prohibit in the namespace, before any command joins it) the Temporal server's
 * addresses, the host's own, and link-local and metadata ones. An operator may turn the way out off
 * (`egress: false`: localhost only), and allow loopback services by port: `--session-net` then
 * relays 127.0.0.1:<port> inside to 127.0.0.1:<port> of the host.
 *
 * A namespace is held by a process (the supervisor's `--session-holder`), and it, its slirp4netns
 * and its relay each run in their own session, so all outlive a worker that restarts; the next
 * worker finds them through the session's record. Not a file (a bind mount of the namespace's nsfs
 * entry), as workers with root kept it before 0.3.0: every session's bubblewrap copies and
 * remounts each of the host's mounts, so each live session's file made every launch slower
 * (docs/PERFORMANCE.md), and one unmounted during another session's launch failed that launch.
 * Made on a session's first command on this host; `release` ends them once nothing of the session
 * runs here.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { executablePath } from '../supervisor/executable-path.js';
import { signalRecorded } from '../supervisor/process-groups.js';
import { processStart } from '../supervisor/process-identity.js';
import { supervisorPath } from '../supervisor/supervisor.js';
import type { TemporalAddresses } from './temporal-addresses.js';

export interface SessionNetworksOptions {
  /** Where each session's namespace file and record live (inside the spill directory, hidden from commands). */
  dir: string;
  /** The slirp4netns binary. @default `slirp4netns` on PATH */
  slirp4netns?: string;
  /**
   * The network namespace sessions' traffic leaves from (a file, as `ip netns` makes): slirp4netns
   * runs there, and "the host's loopback" is that namespace's. @default the worker's own
   */
  egressNetns?: string;
  /** Whether commands reach out (through slirp4netns); without, a session has its localhost only. @default true */
  egress?: boolean;
  /** Ports of the host's loopback a session may reach, as 127.0.0.1:<port> inside. @default none */
  allowedPorts?: readonly number[];
  /** The supervisor binary (its `--session-net` and `--session-holder`). @default the package's */
  supervisor?: string;
  /**
   * For a worker without root: each session's network namespace lies in a user namespace of the
   * worker's user, held by the same process, and commands join that user namespace first.
   * @default false
   */
  userNamespace?: boolean;
  /** The Temporal server's addresses, refused with the host's own and link-local and metadata ones. @default none */
  temporal?: TemporalAddresses;
}

/** A session's network on this host: the namespace its commands join, and its owner to join first. */
export interface SessionNetwork {
  netns: string;
  /** The user namespace that owns it (a worker without root's). */
  userns?: string;
  /** The process holding them (none for a namespace a worker before 0.3.0 kept in a file). */
  holderPid?: number;
}

/** A process of a session's network, by pid and start time. */
interface RecordedProcess {
  pid: number;
  start: number;
}

/** What a session's record holds: its holder, its slirp4netns and its relay of allowed ports, where it has them. */
interface NetworkRecord {
  /** The process holding the namespaces (none where a worker before 0.3.0 kept them in a file). */
  holder?: RecordedProcess;
  slirp?: RecordedProcess;
  relay?: RecordedProcess;
}

/** The address a command reaches the host's DNS through (slirp4netns's forwarder). */
export const SESSION_DNS_ADDRESS = '10.0.2.3';

/**
 * Refused in every session's network: link-local addresses, where clouds serve each machine's
 * metadata and credentials (169.254.169.254), and AWS's IPv6 metadata address. IPv6 link-local
 * ones (fe80::/10) lie on a link, and a session's one link is its own tap.
 */
const LINK_LOCAL_AND_METADATA: readonly string[] = ['169.254.0.0/16', 'fd00:ec2::254/128'];

/** This process's own addresses (its namespace's, not loopback), each as a prefix of one address. */
function ownAddresses(): string[] {
  return (
    Object.values(os.networkInterfaces())
      .flatMap((addresses) => addresses ?? [])
      // Link-local IPv6 reaches only a link, and a session's only link is its own.
      .filter((address) => !address.internal && !address.address.startsWith('fe80:'))
      .map((address) => `${address.address}/${address.family === 'IPv6' ? 128 : 32}`)
  );
}

export class SessionNetworks {
  private readonly slirp: string | undefined;
  private readonly supervisor: string;
  private readonly ports: readonly number[];
  /** Sessions whose network is being made now, so two commands of one session make one. */
  private readonly making = new Map<string, Promise<SessionNetwork>>();
  /** Sessions whose network this worker made or readied since it started: its refusals are in place. */
  private readonly readied = new Set<string>();

  constructor(private readonly options: SessionNetworksOptions) {
    this.supervisor = options.supervisor ?? supervisorPath();
    this.ports = [...new Set(options.allowedPorts ?? [])];
    for (const port of this.ports)
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new TypeError(`not a port: ${port}`);
    if (options.egress !== false) {
      const name = options.slirp4netns ?? 'slirp4netns';
      const found = executablePath(name);
      if (found === undefined)
        throw new Error(name.includes('/') ? `no slirp4netns at ${name}` : `no ${name} on PATH`);
      this.slirp = found;
    }
    if (options.userNamespace && options.egressNetns !== undefined)
      throw new Error('an egress namespace needs a worker with root');
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  }

  /** The session's network, made now if it has none (or its slirp4netns is gone). */
  ensure(key: string): Promise<SessionNetwork> {
    const pending = this.making.get(key);
    if (pending) return pending;
    const made = this.make(key).finally(() => this.making.delete(key));
    this.making.set(key, made);
    return made;
  }

  /** The sessions with a network on this host (a record), as their keys. */
  sessions(): string[] {
    try {
      return readdirSync(this.options.dir)
        .filter((name) => name.endsWith('.net.json'))
        .map((name) => name.slice(0, -'.net.json'.length));
    } catch {
      return [];
    }
  }

  /** For the worker's start line: where a session's commands reach, and what is refused them. */
  get summary(): string {
    if (this.slirp === undefined) return `the session's own localhost and no way out, ${this.loopback()}`;
    const shown = this.options.temporal?.shown ?? [];
    const refused = [
      ...(this.ports.length === 0
        ? ["the host's loopback", 'its own addresses']
        : ["the host's own addresses"]),
      ...(shown.length === 0 ? [] : [`the Temporal server's (${shown.join(', ')})`]),
      'link-local and metadata addresses',
    ];
    const without = `without ${refused.slice(0, -1).join(', ')} or ${refused.at(-1)}`;
    return `the session's own network ${this.ports.length === 0 ? without : `${this.loopback()}, ${without}`}`;
  }

  private loopback(): string {
    const ports = this.ports;
    return ports.length === 0
      ? "without the host's loopback"
      : `reaching the host's loopback only at port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}`;
  }

  /** Ends the session's network: its slirp4netns, then the namespace (once no process is in it, it is gone). */
  release(key: string): void {
    this.readied.delete(key);
    const record = this.recordOf(key);
    if (record?.slirp) signalRecorded('--signal', record.slirp.pid, record.slirp.start, 'SIGTERM');
    if (record?.holder) signalRecorded('--signal', record.holder.pid, record.holder.start, 'SIGTERM');
    // The relay's group: its relays of open connections go with it.
    if (record?.relay) signalRecorded('--signal-group', record.relay.pid, record.relay.start, 'SIGTERM');
    const file = this.netnsFile(key);
    if (existsSync(file)) {
      spawnSync('umount', [file], { stdio: 'ignore' });
      rmSync(file, { force: true });
    }
    rmSync(this.recordFile(key), { force: true });
    rmSync(this.logFile(key, 'slirp'), { force: true });
    rmSync(this.logFile(key, 'relay'), { force: true });
    rmSync(this.logFile(key, 'holder'), { force: true });
  }

  private async make(key: string): Promise<SessionNetwork> {
    const record = this.recordOf(key);
    if (record !== undefined && this.complete(record, key)) {
      const network = this.networkOf(key, record);
      // Found, not made by this worker: readied once more, since a worker before the refusals
      // made it without them, and the addresses to refuse may have changed since.
      if (!this.readied.has(key)) {
        await this.startRelay(network, await this.refused(), [], this.logFile(key, 'relay'));
        this.readied.add(key);
      }
      return network;
    }
    // Known before anything starts: a failure to resolve them leaves nothing to end.
    const refused = await this.refused();
    // Anything left of an earlier one (a process of it died) goes first: a fresh namespace.
    this.release(key);
    const started: NetworkRecord = {};
    try {
      started.holder = await this.startReady(
        "the session's namespaces",
        [this.supervisor, '--session-holder', ...(this.options.userNamespace ? [] : ['--net-only'])],
        this.logFile(key, 'holder'),
      );
      const network = this.networkOf(key, started);
      // Readied before its way out exists: no packet leaves before the refusals are routed.
      started.relay = await this.startRelay(network, refused, this.ports, this.logFile(key, 'relay'));
      if (this.slirp !== undefined)
        started.slirp = await this.startSlirp(this.slirp, network, this.logFile(key, 'slirp'));
      this.readied.add(key);
      return network;
    } finally {
      // Written even when a part failed, so the next try ends what did start.
      writeFileSync(this.recordFile(key), `${JSON.stringify(started)}\n`, { mode: 0o600 });
    }
  }

  private networkOf(key: string, record: NetworkRecord): SessionNetwork {
    const pid = record.holder?.pid;
    // A namespace a worker before 0.3.0 kept in a file: its tasks may still run there.
    if (pid === undefined) return { netns: this.netnsFile(key) };
    return {
      netns: `/proc/${pid}/ns/net`,
      ...(this.options.userNamespace ? { userns: `/proc/${pid}/ns/user` } : {}),
      holderPid: pid,
    };
  }

  /** Whether the session's namespace is still held, and every process its network needs still runs. */
  private complete(record: NetworkRecord, key: string): boolean {
    const alive = (p: RecordedProcess | undefined) => p !== undefined && processStart(p.pid) === p.start;
    const held =
      record.holder !== undefined
        ? alive(record.holder)
        : !this.options.userNamespace && this.keptInFile(key);
    return (
      held &&
      (this.slirp === undefined || alive(record.slirp)) &&
      (this.ports.length === 0 || alive(record.relay))
    );
  }

  /** Whether a worker before 0.3.0 left the session's namespace in its file (a mount of nsfs there). */
  private keptInFile(key: string): boolean {
    try {
      return statSync(this.netnsFile(key)).dev !== statSync(this.options.dir).dev;
    } catch {
      return false;
    }
  }

  /**
   * What every session's network refuses, besides the addresses of the namespace its traffic leaves
   * from (`--session-net` reads those): with an egress namespace of its own, the worker's host's
   * addresses too, which that namespace's are not.
   */
  private async refused(): Promise<readonly string[]> {
    return [
      ...LINK_LOCAL_AND_METADATA,
      ...((await this.options.temporal?.prefixes()) ?? []),
      ...(this.options.egressNetns !== undefined ? ownAddresses() : []),
    ];
  }

  /**
   * The supervisor's `--session-net`, in the namespace sessions' traffic leaves from (whose own
   * addresses it refuses): brings the namespace's loopback up and routes the refused addresses
   * away; with allowed ports it stays, relaying them (resolves once it listens); without, it is
   * done once it exits.
   */
  private startRelay(
    network: SessionNetwork,
    refused: readonly string[],
    ports: readonly number[],
    log: string,
  ): Promise<RecordedProcess | undefined> {
    const argv = this.outside([
      this.supervisor,
      '--session-net',
      ...(network.userns ? ['--userns', network.userns] : []),
      ...refused.flatMap((prefix) => ['--refuse', prefix]),
      network.netns,
      ...ports.map(String),
    ]);
    if (ports.length === 0) {
      const ran = spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8' });
      if (ran.status !== 0)
        return Promise.reject(
          new Error(`cannot ready a session's network: ${ran.stderr.trim() || ran.error}`),
        );
      return Promise.resolve(undefined);
    }
    return this.startReady('the relay of allowed ports', argv, log);
  }

  /** argv run in the namespace sessions' traffic leaves from (the worker's own unless told). */
  private outside(argv: string[]): string[] {
    const egress = this.options.egressNetns;
    return egress === undefined ? argv : ['nsenter', `--net=${egress}`, '--', ...argv];
  }

  /** Starts slirp4netns for the namespace and resolves once it has configured it. */
  private startSlirp(slirp: string, network: SessionNetwork, log: string): Promise<RecordedProcess> {
    // A network in a user namespace by its holder's pid: slirp4netns then joins that user namespace
    // for its own sandbox too (1.2.0 ignores --userns-path there).
    const byPid = network.userns !== undefined && network.holderPid !== undefined;
    const argv = [
      slirp,
      ...(byPid ? [] : ['--netns-type=path']),
      '--configure',
      '--mtu=65520',
      '--disable-host-loopback',
      '--enable-sandbox',
      '--enable-seccomp',
      '--ready-fd=3',
      byPid ? String(network.holderPid) : network.netns,
      'tap0',
    ];
    return this.startReady('slirp4netns', this.outside(argv), log) as Promise<RecordedProcess>;
  }

  /**
   * Starts a process of the network in its own session, so it outlives this worker, and resolves
   * once it writes on its fd 3 that it is ready.
   */
  private startReady(name: string, argv: string[], log: string): Promise<RecordedProcess> {
    // Its errors go to a file: a pipe would close with this worker, and a write then kill it.
    const logFd = openSync(log, 'w', 0o600);
    const child = spawn(argv[0] as string, argv.slice(1), {
      detached: true,
      stdio: ['ignore', 'ignore', logFd, 'pipe'],
    });
    closeSync(logFd);
    return new Promise((resolve, reject) => {
      const ready = child.stdio[3];
      const failed = (why: string) => {
        child.kill('SIGKILL');
        let said = '';
        try {
          said = readFileSync(log, 'utf8').trim();
        } catch {
          // No log.
        }
        reject(new Error(`${name} did not start: ${why}${said ? `: ${said}` : ''}`));
      };
      child.once('error', (err) => failed(err.message));
      child.once('exit', (code, signal) => failed(`it exited (${signal ?? code})`));
      ready?.once('data', () => {
        child.removeAllListeners('exit');
        ready.destroy();
        child.unref();
        const pid = child.pid as number;
        resolve({ pid, start: processStart(pid) ?? 0 });
      });
    });
  }

  private recordOf(key: string): NetworkRecord | undefined {
    try {
      const record = JSON.parse(readFileSync(this.recordFile(key), 'utf8')) as NetworkRecord & {
        slirpPid?: number;
        slirpStart?: number;
      };
      // Workers before allowed ports recorded their slirp4netns flat.
      if (record.slirpPid !== undefined)
        return { slirp: { pid: record.slirpPid, start: record.slirpStart ?? 0 } };
      return record;
    } catch {
      return undefined;
    }
  }

  /**
   * Ends the networks a worker of this directory started and never recorded: a worker SIGKILLed
   * between its holder's start and the record's write leaves a holder no record names, which
   * nothing would end. Its holder (this binary's `--session-holder`, older than `minAgeMs`: a live
   * worker records its holder within seconds) and the processes that joined its namespace by path
   * (its slirp4netns, its relay) are sent SIGTERM. Returns how many holders it ended.
   */
  endUnrecorded(minAgeMs: number): number {
    const supervisor = this.supervisor;
    const recorded = new Set(this.sessions().map((key) => this.recordOf(key)?.holder?.pid));
    const processes = listProcesses();
    const orphans = processes.filter(
      ({ pid, argv }) =>
        argv[0] === supervisor &&
        argv[1] === '--session-holder' &&
        !recorded.has(pid) &&
        Date.now() - startedAtMs(pid) >= minAgeMs,
    );
    for (const holder of orphans) {
      const joined = `/proc/${holder.pid}/ns/`;
      for (const { pid, argv } of processes)
        if (argv.some((arg) => arg.startsWith(joined))) signalQuietly(pid);
      signalQuietly(holder.pid);
    }
    return orphans.length;
  }

  /** Where a worker before 0.3.0 kept a session's namespace (its key is a file name: hex). */
  private netnsFile(key: string): string {
    if (!/^[0-9a-f]{8,64}$/.test(key)) throw new TypeError(`not a session key: ${key}`);
    return path.join(this.options.dir, `${key}.netns`);
  }

  private logFile(key: string, name: 'slirp' | 'relay' | 'holder'): string {
    return path.join(this.options.dir, `${key}.${name}.log`);
  }

  private recordFile(key: string): string {
    return path.join(this.options.dir, `${key}.net.json`);
  }
}

/**
 * The processes of this machine with their argv. A sweep reads it each minute, and a host of a
 * thousand tasks runs thousands of processes: one read each, nothing more.
 */
function listProcesses(): { pid: number; argv: string[] }[] {
  const found: { pid: number; argv: string[] }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      found.push({ pid: Number(entry), argv });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** When a process started, by its /proc entry; now for one gone meanwhile (too young to end). */
function startedAtMs(pid: number): number {
  try {
    return statSync(`/proc/${pid}`).ctimeMs;
  } catch {
    return Date.now();
  }
}

/** SIGTERM to a process (and its group, when it leads one: a relay's) that may be gone already. */
function signalQuietly(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGTERM');
      return;
    } catch {
      // Not a group leader, or gone.
    }
  }
}
