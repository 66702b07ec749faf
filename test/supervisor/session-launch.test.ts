// The launcher of a worker with root (`--session-launch`, supervisor/session-launch.c): what it
// gives the inner supervisor (new namespaces, the session's network, a fresh /dev and /proc, every
// mount nosuid and nodev, its mounts in order with their sources taken first, two capabilities),
// what it tells of a setup error, and that it takes its namespace with it when it dies. Real
// processes and mounts; needs root. Each test ends what it started.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processStart } from '../../src/command-host/supervisor/process-identity.js';
import { waitFor } from '../helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'dist/bin/durable-bash-supervisor');

let scratch: string;
/** A session's network, held as a worker with root holds one. */
let holder: ChildProcess;
let netns: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-launch-'));
  holder = spawn(bin, ['--session-holder', '--net-only'], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] });
  await once(holder.stdio[3] as NodeJS.ReadableStream, 'data');
  netns = `/proc/${holder.pid}/ns/net`;
});

afterEach(async () => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
});

afterAll(async () => {
  holder?.kill('SIGTERM');
  if (holder && holder.exitCode === null && holder.signalCode === null) await once(holder, 'exit');
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs a shell line under the launcher with `ops` (as root: no inner supervisor); its output and status. */
function launch(ops: string[], line: string) {
  const ran = spawnSync(bin, ['--session-launch', '--net', netns, ...ops, '--', '/bin/bash', '-c', line], {
    encoding: 'utf8',
  });
  return { stdout: ran.stdout.trim(), stderr: ran.stderr.trim(), status: ran.status };
}

describe('--session-launch', () => {
  it("runs its program as PID 1 of new namespaces, in the session's network, leading a session of its own", () => {
    const own = (ns: string) => readlinkSync(`/proc/self/ns/${ns}`);
    const { stdout, status } = launch(
      [],
      'echo $$; for ns in net mnt pid ipc uts cgroup; do readlink /proc/self/ns/$ns; done; ps -o sid= -p $$; ls /proc | grep -c "^[0-9]"',
    );
    expect(status).toBe(0);
    const [pid, net, mnt, pidNs, ipc, uts, cgroup, sid, processes] = stdout.split('\n').map((l) => l.trim());
    expect(pid).toBe('1');
    expect(net).toBe(readlinkSync(netns));
    for (const [ns, inside] of Object.entries({ mnt, pid: pidNs, ipc, uts, cgroup }))
      expect({ ns, inside }).not.toEqual({ ns, inside: own(ns) });
    expect(sid).toBe('1');
    // Its /proc is the new namespace's: bash, and ls with grep.
    expect(Number(processes)).toBeLessThanOrEqual(4);
  });

  it('gives it a fresh /dev, its kernel knobs read-only, every mount nosuid and nodev but the device nodes', () => {
    const { stdout, status } = launch(
      [],
      [
        'ls /dev | tr "\\n" " "; echo',
        // Each mount's options and target, from the namespace's own table.
        `awk '{ print $5, $6 }' /proc/self/mountinfo`,
      ].join('; '),
    );
    expect(status).toBe(0);
    const [devices, ...mounts] = stdout.split('\n');
    expect(devices?.trim().split(' ').sort()).toEqual(
      [
        'core',
        'fd',
        'full',
        'null',
        'ptmx',
        'pts',
        'random',
        'shm',
        'stderr',
        'stdin',
        'stdout',
        'tty',
        'urandom',
        'zero',
      ].sort(),
    );
    const options = new Map(mounts.map((line) => line.split(' ') as [string, string]));
    for (const [target, flags] of options) {
      expect({ target, nosuid: flags.split(',').includes('nosuid') }).toEqual({ target, nosuid: true });
      const device = /^\/dev(\/(null|zero|full|random|urandom|tty|pts))?$/.test(target);
      expect({ target, nodev: flags.split(',').includes('nodev') }).toEqual({ target, nodev: !device });
    }
    expect(options.get('/proc/sys')?.split(',')).toContain('ro');
  });

  it('applies its mounts in order, each bind from its source as the host had it, and enters the directory', () => {
    const dir = path.join(scratch, 'order');
    mkdirSync(path.join(dir, 'work'), { recursive: true });
    mkdirSync(path.join(dir, 'own-tmp'), { recursive: true });
    mkdirSync(path.join(dir, 'hidden'), { recursive: true });
    writeFileSync(path.join(dir, 'work', 'file'), 'the work\n');
    writeFileSync(path.join(dir, 'hidden', 'secret'), 'secret\n');
    writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 10.0.2.3\n');
    const { stdout, stderr, status } = launch(
      [
        // The session's /tmp over the host's, then a directory that lay in the host's /tmp bound
        // in: taken from the host's /tmp, not the session's.
        '--bind',
        path.join(dir, 'own-tmp'),
        '/tmp',
        '--perms',
        '0711',
        '--dir',
        '/tmp/a/b',
        '--bind',
        path.join(dir, 'work'),
        path.join(dir, 'work'),
        '--tmpfs',
        path.join(dir, 'hidden'),
        '--remount-ro',
        path.join(dir, 'hidden'),
        '--ro-bind',
        path.join(dir, 'resolv.conf'),
        '/etc/resolv.conf',
        '--tmpfs',
        '/run',
        '--chdir',
        path.join(dir, 'work'),
      ],
      [
        'pwd',
        'cat file',
        'stat -c %a /tmp/a/b',
        'ls -A /tmp | tr "\\n" " "; echo',
        `ls -A ${path.join(dir, 'hidden')} | wc -l`,
        `touch ${path.join(dir, 'hidden', 'x')} 2>/dev/null && echo wrote hidden || echo hidden read-only`,
        'cat /etc/resolv.conf',
        '(echo > /etc/resolv.conf) 2>/dev/null && echo wrote resolv.conf || echo resolv.conf read-only',
        'ls -A /run | wc -l',
      ].join('; '),
    );
    expect({ stderr, status }).toEqual({ stderr: '', status: 0 });
    expect(stdout.split('\n')).toEqual([
      path.join(dir, 'work'),
      'the work',
      '711',
      // The way down to the bound directory, made in the session's /tmp (as bubblewrap makes it).
      `a ${path.relative('/tmp', scratch).split(path.sep)[0]} `,
      '0',
      'hidden read-only',
      'nameserver 10.0.2.3',
      'resolv.conf read-only',
      '0',
    ]);
  });

  it("binds a file over a symlink whose target lay in what it emptied: systemd-resolved's /etc/resolv.conf", () => {
    const dir = path.join(scratch, 'links');
    mkdirSync(path.join(dir, 'rel'), { recursive: true });
    writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 10.0.2.3\n');
    // As /etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf, with /run the session's empty one.
    symlinkSync('/run/systemd/resolve/stub-resolv.conf', path.join(dir, 'absolute'));
    symlinkSync('../gone/stub.conf', path.join(dir, 'rel', 'relative'));
    const { stdout, stderr, status } = launch(
      [
        '--tmpfs',
        '/run',
        '--ro-bind',
        path.join(dir, 'resolv.conf'),
        path.join(dir, 'absolute'),
        '--ro-bind',
        path.join(dir, 'resolv.conf'),
        path.join(dir, 'rel', 'relative'),
      ],
      `cat ${path.join(dir, 'absolute')} ${path.join(dir, 'rel', 'relative')}`,
    );
    expect({ stdout, stderr, status }).toEqual({
      stdout: 'nameserver 10.0.2.3\nnameserver 10.0.2.3',
      stderr: '',
      status: 0,
    });
  });

  it('keeps the inner supervisor two capabilities, none inheritable or ambient', () => {
    const { stdout } = launch([], 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status | tr -s "\\t" " "');
    // CAP_SETGID (6) and CAP_SETUID (7), for the switch to the session's uid; the launcher made the
    // idmapped workdir itself, so none keeps CAP_SYS_ADMIN.
    expect(stdout.split('\n')).toEqual([
      'CapInh: 0000000000000000',
      'CapPrm: 00000000000000c0',
      'CapEff: 00000000000000c0',
      'CapBnd: 00000000000000c0',
      'CapAmb: 0000000000000000',
    ]);
  });

  it('says a setup error in one line on stderr, exits 1 and runs nothing', () => {
    const missing = path.join(scratch, 'no-such-dir');
    const marker = path.join(scratch, 'ran');
    const { stdout, stderr, status } = launch(['--bind', missing, '/mnt'], `touch ${marker}`);
    expect({ stdout, stderr, status }).toEqual({
      stdout: '',
      stderr: `durable-bash-supervisor: cannot bind ${missing}: No such file or directory`,
      status: 1,
    });
    expect(spawnSync('test', ['-e', marker]).status).toBe(1);
    const cut = spawnSync(bin, ['--session-launch', '--net', netns, '--tmpfs'], { encoding: 'utf8' });
    expect({ stderr: cut.stderr, status: cut.status }).toEqual({
      stderr: "durable-bash-supervisor --session-launch: an option's value is missing\n",
      status: 1,
    });
  });

  it('takes its namespace with it when it is killed: nothing it started lives on', async () => {
    const child = spawn(
      bin,
      ['--session-launch', '--net', netns, '--', '/bin/bash', '-c', 'sleep 300 & echo $!; wait'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    started.push(child);
    await once(child.stdout as NodeJS.ReadableStream, 'data');
    // The namespace's PID 1 (bash) and its sleep, as the host sees them.
    const inside = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim();
    const sleeper = spawnSync('pgrep', ['-P', inside], { encoding: 'utf8' }).stdout.trim();
    const starts = [inside, sleeper].map((pid) => ({ pid: Number(pid), start: processStart(Number(pid)) }));
    expect(starts.every(({ start }) => start !== undefined)).toBe(true);
    child.kill('SIGKILL');
    await waitFor(() => starts.every(({ pid, start }) => processStart(pid) !== start));
  });
});
