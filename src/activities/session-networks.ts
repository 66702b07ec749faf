/**
 * Each session's own network (docs/CONTAINMENT.md, "Sessions apart"): a network namespace that the
 * session's commands share, so a server one command starts on localhost is reachable from the
 * session's next command, and no other session's is. Its way out is slirp4netns, a user-mode TCP/IP
 * stack that opens connections from the worker host as any program there does, except to the
 * host's loopback (`--disable-host-loopback`): the Temporal server and every other service that
 * listens only on the host's 127.0.0.1 stay out of reach, while the internet does not.
 *
 * A namespace lives in a file (a bind mount of its nsfs entry, made by `unshare --net=<file>`), and
 * its slirp4netns in its own session, so both outlive a worker that restarts; the next worker finds
 * them through the session's record. Made on a session's first command on this host; `release`
 * ends them once nothing of the session runs here.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { executablePath } from './executable-path.js';
import { signalRecorded } from './process-groups.js';
import { processStart } from './supervisor-records.js';

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
}

/** A session's network on this host: the namespace file its commands join. */
export interface SessionNetwork {
  netns: string;
}

/** What a session's record holds: its slirp4netns, by pid and start time. */
interface NetworkRecord {
  slirpPid: number;
  slirpStart: number;
}

/** The address a command reaches the host's DNS through (slirp4netns's forwarder). */
export const SESSION_DNS_ADDRESS = '10.0.2.3';

export class SessionNetworks {
  private readonly slirp: string;
  /** Sessions whose network is being made now, so two commands of one session make one. */
  private readonly making = new Map<string, Promise<SessionNetwork>>();

  constructor(private readonly options: SessionNetworksOptions) {
    const name = options.slirp4netns ?? 'slirp4netns';
    const found = executablePath(name);
    if (found === undefined)
      throw new Error(name.includes('/') ? `no slirp4netns at ${name}` : `no ${name} on PATH`);
    this.slirp = found;
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

  /** Ends the session's network: its slirp4netns, then the namespace (once no process is in it, it is gone). */
  release(key: string): void {
    const record = this.recordOf(key);
    if (record !== undefined) signalRecorded('--signal', record.slirpPid, record.slirpStart, 'SIGTERM');
    spawnSync('umount', [this.netnsFile(key)], { stdio: 'ignore' });
    rmSync(this.netnsFile(key), { force: true });
    rmSync(this.recordFile(key), { force: true });
    rmSync(path.join(this.options.dir, `${key}.slirp.log`), { force: true });
  }

  private async make(key: string): Promise<SessionNetwork> {
    const netns = this.netnsFile(key);
    const record = this.recordOf(key);
    if (record !== undefined && processStart(record.slirpPid) === record.slirpStart) return { netns };
    // Anything left of an earlier one (its slirp4netns died) goes first: a fresh namespace.
    this.release(key);
    writeFileSync(netns, '', { mode: 0o600 });
    const made = spawnSync('unshare', [`--net=${netns}`, 'true'], { encoding: 'utf8' });
    if (made.status !== 0) {
      rmSync(netns, { force: true });
      throw new Error(`cannot make a network namespace for a session: ${made.stderr.trim() || made.error}`);
    }
    const slirp = await this.startSlirp(netns, path.join(this.options.dir, `${key}.slirp.log`));
    const started: NetworkRecord = {
      slirpPid: slirp.pid as number,
      slirpStart: processStart(slirp.pid as number) ?? 0,
    };
    writeFileSync(this.recordFile(key), `${JSON.stringify(started)}\n`, { mode: 0o600 });
    return { netns };
  }

  /** Starts slirp4netns for the namespace and resolves once it has configured it (its ready fd). */
  private startSlirp(netns: string, log: string): Promise<ChildProcess> {
    // Its errors go to a file: a pipe would close with this worker, and a write then kill it.
    const logFd = openSync(log, 'w', 0o600);
    const egress = this.options.egressNetns;
    const child = spawn(
      egress === undefined ? this.slirp : 'nsenter',
      [
        ...(egress === undefined ? [] : [`--net=${egress}`, '--', this.slirp]),
        '--netns-type=path',
        '--configure',
        '--mtu=65520',
        '--disable-host-loopback',
        '--enable-sandbox',
        '--enable-seccomp',
        '--ready-fd=3',
        netns,
        'tap0',
      ],
      // Its own session, so it outlives this worker; it writes `1` on fd 3 once configured.
      { detached: true, stdio: ['ignore', 'ignore', logFd, 'pipe'] },
    );
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
        reject(new Error(`slirp4netns did not start: ${why}${said ? `: ${said}` : ''}`));
      };
      child.once('error', (err) => failed(err.message));
      child.once('exit', (code, signal) => failed(`it exited (${signal ?? code})`));
      ready?.once('data', () => {
        child.removeAllListeners('exit');
        ready.destroy();
        child.unref();
        resolve(child);
      });
    });
  }

  private recordOf(key: string): NetworkRecord | undefined {
    try {
      return JSON.parse(readFileSync(this.recordFile(key), 'utf8')) as NetworkRecord;
    } catch {
      return undefined;
    }
  }

  /** The namespace file of a session (its key is a file name: hex). */
  netnsFile(key: string): string {
    if (!/^[0-9a-f]{8,64}$/.test(key)) throw new TypeError(`not a session key: ${key}`);
    return path.join(this.options.dir, `${key}.netns`);
  }

  private recordFile(key: string): string {
    return path.join(this.options.dir, `${key}.net.json`);
  }
}
