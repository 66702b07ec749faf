// Memory cost of the per-command supervisor: starts N supervisors (default 1000), each running
// `sleep 600`, sums their PSS from /proc/<pid>/smaps_rollup (and the sleeps' PSS, for scale), then
// kills every one by pid and checks that none is left.
//
//   node bench/supervisor-pss.mjs [N] [--bin path/to/durable-bash-supervisor] [--as-worker]
//
// --as-worker passes the flags a worker passes (npm run build first): a cgroup per task where this
// host allows one, the default limits, and output relayed through pipes up to the per-stream cap.
//
// Linux only. Build the binary first: bash scripts/build-supervisor.sh
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const binFlag = args.indexOf('--bin');
const bin =
  binFlag >= 0 ? path.resolve(args[binFlag + 1]) : path.join(root, 'dist/bin/durable-bash-supervisor');
const count = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--bin') ?? 1000);
const asWorker = args.includes('--as-worker');

/** The supervisor flags a worker with the default executor options passes for task `name`. */
async function workerFlags() {
  if (!asWorker) return () => [];
  const { compileExecutorOptions } = await import('../dist/command-host/executor-config.js');
  const { setUpExecutor } = await import('../dist/command-host/executor-setup.js');
  const { taskCgroups } = await import('../dist/command-host/containment/cgroups.js');
  // As a worker starts: the options compiled, then the host probed (its cgroups among the rest).
  const { containment } = setUpExecutor(compileExecutorOptions({}, 'bench'));
  console.log(containment.summary);
  const { limits } = containment;
  return (name) => [
    ...taskCgroups(containment, name).flatMap((dir) => ['--cgroup', dir]),
    ...(limits.processes ? ['--pids-max', String(limits.processes)] : []),
    ...(limits.memoryBytes ? ['--memory-max', String(limits.memoryBytes)] : []),
    '--output-max',
    String(limits.outputBytesPerStream),
  ];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Field 22 of /proc/<pid>/stat (after the last ')'), or undefined when the pid is gone. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Pss and Rss in KB from smaps_rollup. */
function memory(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { pss: field('Pss'), rss: field('Rss') };
}

/** The state record once it names the command (pid != 0). */
function readState(file) {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8'));
    return record.pid > 0 ? record : undefined;
  } catch {
    return undefined;
  }
}

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function sum(pids) {
  const total = { pss: 0, rss: 0 };
  for (const pid of pids) {
    const m = memory(pid);
    total.pss += m.pss;
    total.rss += m.rss;
  }
  return total;
}

async function main() {
  if (!existsSync(bin)) throw new Error(`${bin} is missing; run bash scripts/build-supervisor.sh`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'supervisor-pss-'));
  const devNull = openSync('/dev/null', 'w');
  const tasks = [];
  const flags = await workerFlags();
  try {
    for (let i = 0; i < count; i++) {
      const state = path.join(dir, `${i}.state`);
      const name = `bash-bench-${process.pid}-${i}`;
      const child = spawn(bin, [...flags(name), state, path.join(dir, `${i}.exit`), '--', 'sleep', '600'], {
        detached: true,
        stdio: ['ignore', devNull, devNull],
      });
      const task = { state, supervisor: child.pid, exited: false };
      child.on('exit', () => {
        task.exited = true;
      });
      tasks.push(task);
    }
    await until('every state record', () => tasks.every((t) => (t.record ??= readState(t.state))));
    for (const t of tasks) t.command = t.record.pid;
    // Let the sleeps exec and settle before sampling.
    await sleep(1000);

    const supervisors = sum(tasks.map((t) => t.supervisor));
    const sleeps = sum(tasks.map((t) => t.command));
    const kb = (n) => `${n} KB`;
    const per = (n) => `${(n / count).toFixed(1)} KB`;
    console.log(`binary:       ${bin} (${readFileSync(bin).length} bytes)`);
    console.log(`machine:      ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 20)} MiB`);
    console.log(`supervisors:  ${count}${asWorker ? ' (as a worker starts them)' : ''}`);
    console.log(`supervisor PSS total ${kb(supervisors.pss)}, per supervisor ${per(supervisors.pss)}`);
    console.log(`supervisor RSS per supervisor ${per(supervisors.rss)}`);
    console.log(`sleep PSS total ${kb(sleeps.pss)}, per sleep ${per(sleeps.pss)} (for scale)`);
  } finally {
    await killAll(tasks);
    closeSync(devNull);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGUSR1 asks each supervisor to SIGKILL its command's group; SIGKILL by pid is the backstop. */
async function killAll(tasks) {
  const starts = tasks.map((t) => ({ t, supervisorStart: startTime(t.supervisor) }));
  for (const t of tasks) process.kill(t.supervisor, 'SIGUSR1');
  try {
    await until('every supervisor to exit', () => tasks.every((t) => t.exited), 30_000);
  } catch {
    for (const { t, supervisorStart } of starts) {
      if (!t.exited && startTime(t.supervisor) === supervisorStart) process.kill(t.supervisor, 'SIGKILL');
    }
    await until('every supervisor to exit after SIGKILL', () => tasks.every((t) => t.exited));
  }
  const left = tasks.filter(
    (t) => t.command && t.record && startTime(t.command) === String(t.record.pidStart),
  );
  if (left.length > 0) {
    for (const t of left) process.kill(t.command, 'SIGKILL');
    throw new Error(`${left.length} sleep(s) outlived their supervisor`);
  }
  console.log(`killed:       ${tasks.length} supervisors and their sleeps; none left`);
}

await main();
