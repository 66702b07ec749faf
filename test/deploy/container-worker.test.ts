// The container's worker as the Dockerfile and docker-compose.yml give it, run here without a
// container engine (none runs on these machines): the Dockerfile's entry point (deploy/worker-loop.sh
// with its flags) and compose's `command:` for the worker, with the image's paths mapped onto this
// checkout and temporary directories, under the image's Node.js release, as root with exactly the
// capabilities compose gives (`setpriv --bounding-set`), no new privileges, and compose's seccomp
// profile loaded through libseccomp as the engine loads it (seccomp-exec.py). What this does not
// run: tini, AppArmor, the image's own filesystem, compose's networks. docs/OPERATIONS.md, "The
// container", says the same.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSessionNetworks } from '../../src/command-host/containment/session-isolation.js';
import { waitFor } from '../helpers/processes.js';
import { sessionTools } from '../helpers/session-tools.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';

/** The instruction's JSON array in the Dockerfile (`ENTRYPOINT [...]`), and the runtime stage's base image. */
function dockerfile(): { entrypoint: string[]; runtimeImage: string; installs: string[] } {
  const text = readFileSync('Dockerfile', 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(text)?.[1];
  const images = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1] as string);
  const install = /apt-get install -y --no-install-recommends ([^\n\\&]+)/.exec(text)?.[1] ?? '';
  return {
    entrypoint: JSON.parse(entrypoint ?? '[]') as string[],
    runtimeImage: images.at(-1) ?? '',
    installs: install.trim().split(/\s+/),
  };
}

/** What docker-compose.yml gives the worker service: its command, capabilities, options, environment. */
function composeWorker(): {
  command: string[];
  capDrop: string[];
  capAdd: string[];
  securityOpt: string[];
  devices: string[];
  hostId: string;
} {
  const text = readFileSync('docker-compose.yml', 'utf8');
  const block = /^ {2}worker:\n((?: {4}.*\n|\s*\n| {2}#.*\n)*)/m.exec(text)?.[1] ?? '';
  const lines = block.split('\n').filter((line) => !line.trim().startsWith('#'));
  /** A key's list: a flow sequence (`[a, "b"]`, on its line or the lines after it) or `- a` lines. */
  const list = (key: string): string[] => {
    const at = lines.findIndex((line) => line.startsWith(`    ${key}:`));
    if (at < 0) return [];
    let flow = (lines[at] as string).slice(`    ${key}:`.length).trim();
    if (flow.startsWith('[') || lines[at + 1]?.trim() === '[') {
      for (let next = at + 1; !flow.endsWith(']'); next++) flow += (lines[next] ?? ']').trim();
      return flow
        .slice(1, -1)
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
        .map((item) => (item.startsWith('"') ? (JSON.parse(item) as string) : item));
    }
    const items: string[] = [];
    for (const line of lines.slice(at + 1)) {
      const item = /^ {6}- (.*)$/.exec(line)?.[1];
      if (item === undefined) break;
      items.push(item);
    }
    return items;
  };
  return {
    command: list('command'),
    capDrop: list('cap_drop'),
    capAdd: list('cap_add'),
    securityOpt: list('security_opt'),
    devices: list('devices'),
    hostId: /^ {6}DURABLE_BASH_HOST_ID: (\S+)$/m.exec(block)?.[1] ?? '',
  };
}

const NODE24_BIN = path.resolve('.node24/bin');

/** keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING) from a command: the error it met, or `Success`. */
const KEYCTL_SESSION_KEYRING = `python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall({"x86_64": 250, "aarch64": 219}[os.uname().machine], 0, ctypes.c_long(-3), 0)
print(os.strerror(ctypes.get_errno()))'`;
const SESSIONS_APART =
  "isolation: sessions apart (a uid per session from 1879048192, own PID namespace, the session's own network without the host's loopback, its own addresses or link-local and metadata addresses, private /tmp and home)";

let env: TestWorkflowEnvironment;
let root: string;
const compose = composeWorker();
const image = dockerfile();

beforeAll(async () => {
  env = await createDevServerEnv();
  root = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-container-'));
});

afterAll(async () => {
  await env?.teardown();
  if (root) rmSync(root, { recursive: true, force: true });
});

interface ContainerWorker {
  loop: ChildProcess;
  stderr(): string;
  spillDir: string;
  workdir: string;
  /** SIGTERM, as `docker stop`: the loop stops the worker and exits 0. */
  stop(): Promise<number | null>;
}

/**
 * The image's entry point with compose's command, as root with `caps` for its capabilities (compose's
 * by default); `hideTun` runs it in a mount namespace of its own without /dev/net/tun, as a
 * container given no such device.
 */
function startContainerWorker(caps = compose.capAdd, hideTun = false): ContainerWorker {
  const dir = mkdtempSync(path.join(root, 'run-'));
  const spillDir = path.join(dir, 'state', 'spill');
  const workdir = path.join(dir, 'workspace');
  mkdirSync(workdir, { recursive: true });
  // Each path of the image, and each address of compose's network, as it is here.
  const here: Record<string, string> = {
    '/app/deploy/worker-loop.sh': path.resolve('deploy/worker-loop.sh'),
    '/var/lib/durable-bash/spill': spillDir,
    '/workspace': workdir,
    'temporal:7233': env.address,
  };
  const mapped = (arg: string) => {
    if (here[arg] !== undefined) return here[arg];
    if (arg.startsWith('/') || arg.includes(':')) throw new Error(`no mapping here for the image's ${arg}`);
    return arg;
  };
  // tini (PID 1 in the image, which reaps what reparents to it) is not installed here: the loop runs alone.
  const [tini, ...afterTini] = image.entrypoint;
  expect([tini, ...afterTini.slice(0, 2)]).toEqual(['/usr/bin/tini', '-s', '--']);
  const [loopScript, ...loopArgs] = [...afterTini.slice(2), ...compose.command].map(mapped);
  const profile = compose.securityOpt.find((opt) => opt.startsWith('seccomp='))?.slice('seccomp='.length);
  const asContainer = [
    ...(profile ? ['python3', path.resolve('test/deploy/seccomp-exec.py'), path.resolve(profile)] : []),
    'setpriv',
    '--bounding-set',
    ['-all', ...caps.map((cap) => `+${cap.toLowerCase()}`)].join(','),
    '--inh-caps',
    '-all',
    ...(compose.securityOpt.includes('no-new-privileges:true') ? ['--no-new-privs'] : []),
    '--',
    'sh',
    loopScript as string,
    ...loopArgs,
  ];
  const argv = hideTun
    ? [
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount -t tmpfs tmpfs /dev/net && exec "$@"',
        'sh',
        ...asContainer,
      ]
    : asContainer;
  const loop = spawn(argv[0] as string, argv.slice(1), {
    env: {
      ...process.env,
      PATH: `${NODE24_BIN}:${process.env.PATH ?? ''}`,
      DURABLE_BASH_CLI: path.resolve('dist/cli/main.js'),
      DURABLE_BASH_HOST_ID: compose.hostId,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  loop.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return {
    loop,
    stderr: () => stderr,
    spillDir,
    workdir,
    async stop() {
      if (loop.exitCode !== null || loop.signalCode !== null) return loop.exitCode;
      loop.kill('SIGTERM');
      const [code] = await once(loop, 'exit');
      endSessionNetworks(spillDir);
      return code as number | null;
    },
  };
}

describe("the container's worker, run outside a container", () => {
  it('runs the Node.js release of the image, which installs what sessions apart need', () => {
    const version = execFileSync(path.join(NODE24_BIN, 'node'), ['--version'], { encoding: 'utf8' }).trim();
    expect(image.runtimeImage).toBe(`node:${version.slice(1)}-bookworm-slim`);
    expect(image.installs).toEqual(['tini', 'slirp4netns', 'bubblewrap']);
    expect(compose.command).toContain('--isolation');
    expect(compose.command[compose.command.indexOf('--isolation') + 1]).toBe('session');
    expect(compose.capDrop).toEqual(['ALL']);
    expect(compose.devices).toEqual(['/dev/net/tun:/dev/net/tun']);
    expect(compose.securityOpt).toEqual([
      'apparmor=unconfined',
      'seccomp=./deploy/seccomp.json',
      'no-new-privileges:true',
    ]);
  });

  it("starts with sessions apart under compose's capabilities, and runs each session as its own uid in its own network", async () => {
    const worker = startContainerWorker();
    try {
      await waitFor(
        () => worker.stderr().includes('worker polling') || worker.loop.exitCode !== null,
        90_000,
      );
      const [start, polling] = worker.stderr().split('\n');
      expect(start?.endsWith(`; ${SESSIONS_APART}`)).toBe(true);
      expect(polling).toBe(`durable-bash: worker polling durable-bash on ${env.address} (default)`);

      const session = sessionTools(
        { client: env.client, taskQueue: 'durable-bash', workdir: worker.workdir },
        'alice',
      );
      const [uid, taps] = (await session.run('id -u; grep -c tap0 /proc/net/dev')).split('\n');
      expect(Number(uid)).toBeGreaterThanOrEqual(1_879_048_192);
      expect(taps).toBe('1');
      // Under the profile: the kernel keyring (keyctl), which is not namespaced, is refused.
      expect(await session.run(KEYCTL_SESSION_KEYRING)).toBe('Operation not permitted\n');
      // A command runs as another uid than the worker's: its end by a kill needs CAP_KILL.
      const taskId = await session.start('sleep 60');
      expect(await session.kill(taskId)).toBe(`killed background task ${taskId}`);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });

  for (const missing of ['SYS_ADMIN', 'NET_ADMIN']) {
    it(`refuses to start without ${missing}, saying why`, async () => {
      const worker = startContainerWorker(compose.capAdd.filter((cap) => cap !== missing));
      try {
        await waitFor(() => worker.stderr().includes('starting it again'), 90_000);
        expect(worker.stderr().split('\n').slice(0, 2)).toEqual([
          `durable-bash: sessions cannot be kept apart on this host: ${
            missing === 'SYS_ADMIN'
              ? "durable-bash-supervisor: cannot join the session's network /proc/self/ns/net: Operation not permitted"
              : "each session's network needs CAP_NET_ADMIN, which this worker lacks (a container: cap_add: [NET_ADMIN])"
          }; --isolation none runs commands without isolation`,
          'durable-bash: the worker exited (1); starting it again in 1 s',
        ]);
      } finally {
        expect(await worker.stop()).toBe(0);
      }
    });
  }

  it('refuses to start without /dev/net/tun, saying how a container gets it', async () => {
    const worker = startContainerWorker(compose.capAdd, true);
    try {
      await waitFor(() => worker.stderr().includes('starting it again'), 90_000);
      expect(worker.stderr().split('\n').slice(0, 2)).toEqual([
        "durable-bash: sessions cannot be kept apart on this host: a session's way out (slirp4netns) needs /dev/net/tun, missing here: load the tun module, or give a container the device (devices: [/dev/net/tun]) (ENOENT); --no-session-egress does without; --isolation none runs commands without isolation",
        'durable-bash: the worker exited (1); starting it again in 1 s',
      ]);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });
});
