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

export class CommandWorker {
  /** `hostId` is passed only when the worker takes --host-id; the spill dir tells the hosts apart anyway. */
  constructor({ name, dist, runDir, runId, server, hostIdFlag, lostAfterMs, workDir }) {
    this.name = name;
    this.cli = cliOf(dist);
    this.runId = runId;
    this.server = server;
    this.spillDir = path.join(runDir, `spill-${name}`);
    this.logFile = path.join(runDir, `worker-${name}.log`);
    this.extraArgs = [];
    if (hostIdFlag) this.extraArgs.push('--host-id', `chaos-${name}`);
    if (lostAfterMs !== undefined) this.extraArgs.push('--lost-after-ms', String(lostAfterMs));
    if (workDir !== undefined) this.extraArgs.push('--workdir', workDir);
    this.proc = undefined;
  }

  /**
   * Starts the worker and resolves once it polls. A worker started while the server is down exits
   * (it cannot connect): try again every second, up to `timeoutMs`. Returns when it polled.
   */
  async start(timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.proc = spawnLogged(
        'node',
        [
          this.cli,
          'worker',
          '--address',
          this.server.address,
          '--task-queue',
          TASK_QUEUE,
          '--spill-dir',
          this.spillDir,
          ...this.extraArgs,
        ],
        { logFile: this.logFile, env: { CHAOS_RUN: this.runId } },
      );
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
