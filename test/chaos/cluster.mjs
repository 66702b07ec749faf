/**
 * The run's Temporal dev server and its two command workers ("hosts"), each a separate OS process
 * the harness can SIGKILL and start again exactly as before: the server on the same database file
 * and ports, a worker with the same host identity and spill directory.
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { killHard, sleep, spawnLogged, waitUntil } from './processes.mjs';

const run = promisify(execFile);
export const TEMPORAL = path.resolve('.temporal/bin/temporal');
export const TASK_QUEUE = 'chaos';

/** The CLI of the run's copy of dist/ (see dist-snapshot.mjs). */
export const cliOf = (dist) => path.join(dist, 'cli/main.js');

/** Whether the built worker takes a flag yet (the lead is adding --host-id and --lost-after-ms). */
export async function workerSupports(dist, flag) {
  const { stdout } = await run('node', [cliOf(dist), 'worker', '--help']);
  return stdout.includes(flag);
}

export class TemporalServer {
  /** `dynamicConfigArgs`: the project's server settings as flags (dist/dev-server/dynamic-config.js). */
  constructor({ runDir, runId, port, uiPort, dynamicConfigArgs }) {
    this.runId = runId;
    this.address = `127.0.0.1:${port}`;
    this.args = [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--db-filename',
      path.join(runDir, 'temporal.db'),
      '--headless',
      '--log-level',
      'error',
      '--search-attribute',
      'BashTaskOwner=Keyword',
      '--search-attribute',
      'BashTaskStatus=Keyword',
      '--search-attribute',
      'BashTaskNotice=Keyword',
      ...dynamicConfigArgs,
    ];
    this.logFile = path.join(runDir, 'server.log');
    this.proc = undefined;
  }

  /** Starts the server and resolves once its frontend answers a health check (bounded). */
  async start() {
    this.proc = spawnLogged(TEMPORAL, this.args, { logFile: this.logFile, env: { CHAOS_RUN: this.runId } });
    const healthy = await waitUntil(
      async () => {
        if (this.proc.hasExited()) return true;
        return this.healthy();
      },
      60_000,
      300,
    );
    if (!healthy || this.proc.hasExited())
      throw new Error(`temporal server did not start: ${this.proc.stderr().slice(-2000)}`);
  }

  async healthy() {
    try {
      const { stdout } = await run(TEMPORAL, ['operator', 'cluster', 'health', '--address', this.address], {
        timeout: 5_000,
        killSignal: 'SIGKILL',
      });
      return stdout.includes('SERVING');
    } catch {
      return false;
    }
  }

  kill() {
    return killHard(this.proc);
  }

  /** The `temporal` CLI against this server, with a bound so a wedged call cannot hang the run. */
  async cli(args, timeoutMs = 30_000) {
    const { stdout } = await run(TEMPORAL, [...args, '--address', this.address], {
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }
}

/**
 * A worker host's own network (as root): a network namespace held by a process of the run, whose
 * only way to the server is a slirp4netns of the run (the machine's loopback, where the server
 * listens, is 10.0.2.2 inside). A partition is that slirp4netns stopped (SIGSTOP): every packet
 * either way is silently lost until it goes on (SIGCONT). No address, route or firewall of the
 * machine changes.
 */
export class HostNetwork {
  constructor({ name, runDir, runId }) {
    this.name = name;
    this.runId = runId;
    this.logFile = path.join(runDir, `network-${name}.log`);
    this.holder = undefined;
    this.slirp = undefined;
    this.netns = undefined;
    this.cutSince = undefined;
  }

  /** Makes the namespace and its way out; resolves once the way out is configured (bounded). */
  async start() {
    const env = { CHAOS_RUN: this.runId };
    this.holder = spawnLogged('unshare', ['--net', '--', 'sh', '-c', 'echo up; exec sleep infinity'], {
      logFile: this.logFile,
      env,
      pipeStdout: true,
    });
    let up = false;
    this.holder.child.stdout.once('data', () => {
      up = true;
    });
    if (!(await waitUntil(() => up, 10_000))) throw new Error(`network ${this.name}: no namespace`);
    this.netns = `/proc/${this.holder.pid}/ns/net`;
    this.slirp = spawnLogged(
      'slirp4netns',
      ['--configure', '--mtu=65520', '--netns-type=path', this.netns, 'tap0'],
      {
        logFile: this.logFile,
        env,
      },
    );
    const configured = await waitUntil(
      async () => {
        const { stdout } = await run('nsenter', [
          `--net=${this.netns}`,
          'ip',
          '-4',
          'addr',
          'show',
          'tap0',
        ]).catch(() => ({ stdout: '' }));
        return stdout.includes('10.0.2.100');
      },
      10_000,
      100,
    );
    if (!configured) throw new Error(`network ${this.name}: slirp4netns did not configure tap0`);
  }

  /** The server's address as seen from inside. */
  serverAddress(address) {
    return `10.0.2.2:${address.split(':').at(-1)}`;
  }

  cut() {
    this.cutSince = Date.now();
    process.kill(this.slirp.pid, 'SIGSTOP');
  }

  restore() {
    this.cutSince = undefined;
    if (!this.slirp.hasExited()) process.kill(this.slirp.pid, 'SIGCONT');
  }

  async stop() {
    if (this.slirp && !this.slirp.hasExited()) this.restore();
    await killHard(this.slirp);
    await killHard(this.holder);
  }
}

export class CommandWorker {
  /**
   * `hostId` is passed only when the worker takes --host-id; the spill dir tells the hosts apart
   * anyway. With a `network` (HostNetwork), the worker runs in it, and can be cut off.
   */
  constructor({ name, dist, runDir, runId, server, hostIdFlag, lostAfterMs, workDir, network = undefined }) {
    this.name = name;
    this.network = network;
    this.cli = cliOf(dist);
    this.runId = runId;
    this.server = server;
    this.spillDir = path.join(runDir, `spill-${name}`);
    this.logFile = path.join(runDir, `worker-${name}.log`);
    this.extraArgs = [];
    if (hostIdFlag) this.extraArgs.push('--host-id', `chaos-${name}`);
    if (lostAfterMs !== undefined) this.extraArgs.push('--lost-after-ms', String(lostAfterMs));
    // The tasks' workdir, handed to their session (the chaos run's directory is root's, 0700).
    if (workDir !== undefined) this.extraArgs.push('--workdir', workDir, '--workdir-root', workDir);
    this.proc = undefined;
  }

  /**
   * Starts the worker and resolves once it polls. A worker started while the server is down exits
   * (it cannot connect): try again every second, up to `timeoutMs`. Returns when it polled.
   */
  async start(timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const args = [
        this.cli,
        'worker',
        '--address',
        this.network ? this.network.serverAddress(this.server.address) : this.server.address,
        '--task-queue',
        TASK_QUEUE,
        '--spill-dir',
        this.spillDir,
        ...this.extraArgs,
      ];
      this.proc = this.network
        ? spawnLogged('nsenter', [`--net=${this.network.netns}`, 'node', ...args], {
            logFile: this.logFile,
            env: { CHAOS_RUN: this.runId },
          })
        : spawnLogged('node', args, { logFile: this.logFile, env: { CHAOS_RUN: this.runId } });
      const proc = this.proc;
      await waitUntil(() => proc.stderr().includes('worker polling') || proc.hasExited(), 60_000);
      if (proc.stderr().includes('worker polling') && !proc.hasExited()) return Date.now();
      await killHard(proc);
      if (Date.now() > deadline) throw new Error(`worker ${this.name} did not start: ${proc.stderr()}`);
      await sleep(1_000);
    }
  }

  kill() {
    return killHard(this.proc);
  }
}

/**
 * The task's stdout via `durable-bash logs` (a snapshot: it never moves the read position), or
 * undefined. Complete once the status line reached stderr: the CLI may linger after that, so it is
 * SIGKILLed then (or after 30 s), never waited on.
 */
export function logsOf(dist, address, owner, taskId) {
  return new Promise((resolve) => {
    const child = spawn(
      'node',
      [cliOf(dist), 'logs', taskId, '--owner', owner, '--address', address, '--task-queue', TASK_QUEUE],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    let done = false;
    const finish = (text) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(text);
    };
    const timer = setTimeout(() => finish(undefined), 30_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      // stdout is written before the status line goes to stderr; let its last chunk arrive.
      if (/\[status: [^\n]*\]\n/.test(stderr)) setTimeout(() => finish(stdout), 500);
    });
    child.on('exit', () => setTimeout(() => finish(/\[status: /.test(stderr) ? stdout : undefined), 100));
  });
}
