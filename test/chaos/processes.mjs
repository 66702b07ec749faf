/** Process plumbing for the chaos run: spawning with logs, bounded waits, kills by pid, free ports. */
import { spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` until it holds; false once `timeoutMs` passed. Every wait of the run is bounded. */
export async function waitUntil(condition, timeoutMs, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** A port nobody listens on now (the kernel picks it; a race with another program is unlikely). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns a process of the run. Its stderr (and stdout, unless piped for a protocol) goes to `logFile`,
 * appended across restarts, so a failing run can be read afterwards. `env` adds to ours; every
 * process gets CHAOS_RUN so the leftover check can find it (and what it spawned) by environment.
 */
export function spawnLogged(command, args, { logFile, env, pipeStdout = false, pipeStdin = false }) {
  const log = createWriteStream(logFile, { flags: 'a' });
  log.write(`\n=== ${new Date().toISOString()} ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: [pipeStdin ? 'pipe' : 'ignore', pipeStdout ? 'pipe' : 'pipe', 'pipe'],
  });
  let stderrText = '';
  child.stderr.on('data', (chunk) => {
    stderrText += chunk.toString();
    if (stderrText.length > 64 * 1024) stderrText = stderrText.slice(-32 * 1024);
    log.write(chunk);
  });
  if (!pipeStdout) child.stdout.on('data', (chunk) => log.write(chunk));
  child.on('exit', (code, signal) => log.end(`=== exited code=${code} signal=${signal}\n`));
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    pid: child.pid,
    exited,
    hasExited: () => child.exitCode !== null || child.signalCode !== null,
    stderr: () => stderrText,
  };
}

/** SIGKILLs a process we started (by its pid) and waits for it to be gone. */
export async function killHard(proc) {
  if (!proc || proc.hasExited()) return;
  process.kill(proc.pid, 'SIGKILL');
  await proc.exited;
}

/** SIGTERM, then SIGKILL after `graceMs`: how the run stops its processes at the end. */
export async function stopGracefully(proc, graceMs = 10_000) {
  if (!proc || proc.hasExited()) return;
  process.kill(proc.pid, 'SIGTERM');
  const ended = await Promise.race([proc.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!ended) await killHard(proc);
}

/**
 * This machine's processes that belong to the run: CHAOS_RUN=<runId> in their environment (all we
 * spawned and everything they spawned: supervisors, task commands, their sleeps), or `needle` in
 * their command line. Skips this process.
 */
export function processesOfRun(runId, needle) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      let environ = '';
      try {
        environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      } catch {
        // Not ours to read: another user's process cannot be of this run.
      }
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // A zombie waits for its parent to reap it; it runs nothing.
      if (/^\d+ \(.*\) Z /.test(stat)) continue;
      if (environ.split('\0').includes(`CHAOS_RUN=${runId}`) || args.includes(needle)) {
        const name = /^\d+ \((.*)\) /.exec(stat)?.[1] ?? '?';
        found.push({ pid: Number(entry), name, args });
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
