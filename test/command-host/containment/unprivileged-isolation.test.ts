// Sessions apart on a host where the worker has no root (docs/CONTAINMENT.md, "Without root"), for
// real: `durable-bash worker` run as the user nobody, with nothing but unprivileged user namespaces.
// Its sessions' way out needs /dev/net/tun open to it, as Debian's udev makes it (mode 0666); this
// machine's is 0600, so the worker runs in a mount namespace of the test's own where /dev/net/tun
// is a 0666 node (the host's device is left as it is). Without that, the worker refuses to start,
// and says why.

import { type ChildProcess, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSessionNetworks } from '../../../src/command-host/containment/session-isolation.js';
import { sessionTools } from '../../helpers/session-tools.js';
import { measuredAttempts, sessionKeepsTogether } from '../../helpers/sessions-apart.js';
import { createDevServerEnv } from '../../helpers/temporal-env.js';
import { connectCommand, serveHello } from '../../helpers/test-networks.js';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';

const NOBODY = 65534;
let env: TestWorkflowEnvironment;
let root: string;
let workdir: string;
let spillDir: string;
let worker: WorkerProcess;
const taskQueue = `unprivileged-${process.pid}`;

/** The tools as one session calls them, in nobody's workdir. */
const session = (sessionId: string) => sessionTools({ client: env.client, taskQueue, workdir }, sessionId);

/** `setpriv` to nobody, HOME in the test's directory: a worker without root. */
const asNobody = (home: string) => [
  'setpriv',
  `--reuid=${NOBODY}`,
  `--regid=${NOBODY}`,
  '--clear-groups',
  'env',
  `HOME=${home}`,
];

/** A wrapper that runs `then` in a mount namespace of the test's own, after `setup`. */
function inOwnMounts(setup: string, then: string[]): string[] {
  return [
    'unshare',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    `${setup} && exec "$@"`,
    'sh',
    ...then,
  ];
}

/**
 * The package as nobody reaches it: the checkout may lie where nobody cannot pass (a clean clone
 * is a 0700 mktemp directory), so its built files and dependencies are linked (hard links, else
 * copies) into <root>/pkg.
 */
function packageBin(): string {
  const pkg = path.join(root, 'pkg');
  if (!existsSync(pkg)) {
    mkdirSync(pkg, { mode: 0o755 });
    for (const part of ['dist', 'node_modules', 'package.json', ...(nodeInCheckout() ? ['.node24'] : [])]) {
      const linked = spawnSync('cp', ['-al', path.join(process.cwd(), part), pkg]);
      if (linked.status !== 0) spawnSync('cp', ['-a', path.join(process.cwd(), part), pkg]);
    }
  }
  return path.join(pkg, 'dist', 'cli', 'main.js');
}

/** Whether this process's node is the Node.js 24 the project provisions, in the checkout's `.node24`. */
const nodeInCheckout = () => process.execPath.startsWith(`${path.join(process.cwd(), '.node24')}/`);

/** The node nobody runs the worker with: this process's, or its copy beside the package when it lies in the checkout. */
const packageNode = () =>
  nodeInCheckout()
    ? path.join(root, 'pkg', path.relative(process.cwd(), process.execPath))
    : process.execPath;

/** A directory of nobody's, as a user without root makes one. */
function nobodysDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chownSync(dir, NOBODY, NOBODY);
  return dir;
}

const hostAddress = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a?.family === 'IPv4' && !a.internal)?.address ?? '';

const servers: ChildProcess[] = [];
const ALLOWED_PORT = 15432;

beforeAll(async () => {
  env = await createDevServerEnv();
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-unprivileged-')));
  // nobody must pass through it to its own directories.
  spawnSync('chmod', ['0755', root]);
  spillDir = path.join(root, 'spill');
  nobodysDir(spillDir);
  workdir = nobodysDir(path.join(root, 'work'));
  const home = nobodysDir(path.join(root, 'home'));
  const tun = path.join(root, 'tun');
  // Servers of the test's own, as root, outside: on the host's loopback and on its own address.
  servers.push(await serveHello('127.0.0.1', ALLOWED_PORT, 'an allowed service'));
  servers.push(await serveHello(hostAddress(), 18081, 'the host network'));
  worker = await startWorkerProcess(
    env,
    taskQueue,
    ['--spill-dir', spillDir, '--workdir', workdir, '--allow-host-port', String(ALLOWED_PORT)],
    {
      wrapper: inOwnMounts(
        `mknod -m 666 ${tun} c 10 200 && mount --bind ${tun} /dev/net/tun`,
        asNobody(home),
      ),
      bin: packageBin(),
      node: packageNode(),
    },
  );
}, 120_000);

afterAll(async () => {
  await worker?.crash();
  endSessionNetworks(spillDir);
  for (const server of servers) server.kill('SIGKILL');
  await env?.teardown();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('sessions apart without root', () => {
  it('says so at start, and what it leaves open', () => {
    expect(worker.stderr()).toContain(
      `isolation: sessions apart without root (own user and PID namespaces, the session's own network reaching the host's loopback only at port ${ALLOWED_PORT}, without the host's own addresses or link-local and metadata addresses, private /tmp and home; every session runs as the worker's uid ${NOBODY}, so one can change another's workdir by its path)`,
    );
  });

  it("keeps one session's commands from the worker, the spill directory, other sessions' processes and the Temporal server", async () => {
    const target = {
      workerPid: worker.child.pid as number,
      spillDir,
      temporalPort: env.address.split(':').pop() ?? '',
    };
    expect(await measuredAttempts(session('victim'), session('attacker'), target)).toEqual([
      'no worker',
      'no output',
      'no victim',
      'no worker process',
      'no temporal',
      `uid ${NOBODY}`,
    ]);
  });

  it("keeps a session together: its workdir, its /tmp, a server on its localhost; reaches the allowed port, not the host's own address", async () => {
    const alice = session('alice');
    const bob = session('bob');
    await sessionKeepsTogether(alice, bob, 8767);
    expect(await bob.run(connectCommand('127.0.0.1', ALLOWED_PORT))).toBe('hello from an allowed service\n');
    // Refused in the session's network, which a worker without root readies in its user namespace.
    expect(await bob.run(connectCommand(hostAddress(), 18081))).toBe('EACCES\n');
  });
});

describe("a session's workdir without root", () => {
  it("refuses one the worker's uid cannot enter, the spill directory and the worker's home, in one line each", async () => {
    const closed = path.join(root, 'roots-own');
    mkdirSync(closed, { mode: 0o700 });
    expect(await sessionTools({ client: env.client, taskQueue, workdir: closed }, 'mallory').run('ls')).toBe(
      `workdir ${closed} cannot be entered by this session: ${closed} is mode 0700, owned by uid 0`,
    );
    expect(
      await sessionTools({ client: env.client, taskQueue, workdir: spillDir }, 'mallory').run('ls'),
    ).toBe(`workdir ${spillDir} cannot be used by a session: it lies in the worker's spill directory`);
    // Its sessions run as its own uid: its home (where its keys would be) is never a session's workdir.
    const keys = nobodysDir(path.join(root, 'home', '.ssh'));
    expect(await sessionTools({ client: env.client, taskQueue, workdir: keys }, 'mallory').run('ls')).toBe(
      `workdir ${keys} cannot be used by a session: it lies in the worker's home, which sessions get their own of`,
    );
  });
});

describe('a worker without root, where sessions cannot be kept apart', () => {
  it('refuses to start, saying what is missing and how to get it', async () => {
    const spill = nobodysDir(path.join(root, 'spill-no-tun'));
    const started = startWorkerProcess(env, `${taskQueue}-plain`, ['--spill-dir', spill], {
      wrapper: inOwnMounts('true', asNobody(nobodysDir(path.join(root, 'home-2')))),
      bin: packageBin(),
      node: packageNode(),
    });
    await expect(started).rejects.toEqual(
      new Error(
        "worker exited: durable-bash: sessions cannot be kept apart on this host: a session's way out (slirp4netns) needs /dev/net/tun, closed to this user: make it mode 0666, as Debian's udev does (EACCES); --no-session-egress does without; --isolation none runs commands without isolation\n",
      ),
    );
  });
});
