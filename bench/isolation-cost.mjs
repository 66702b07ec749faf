// What keeping sessions apart costs a task on this host (docs/CONTAINMENT.md, "What it costs"),
// measured on the launch chains themselves, the worker and Temporal left out:
//
//   - start: the wall time from spawning a command's launch chain to its end, for `bash -c true`,
//     per mode (none: bash alone; session: the supervisor's --session-launch, the inner
//     supervisor's uid switch and idmapped workdir; sandbox: bubblewrap and the inner supervisor),
//     and what the worker spends building a session's launch (`launch()`: the session's uid,
//     directories and network found);
//   - memory: the PSS of the processes between a running command and its supervisor (the launcher
//     and the inner supervisor), per task, with N tasks standing; and a session's network
//     (slirp4netns, the holder of its namespace, and the relay of allowed ports), per session.
//
// Needs root, bwrap (for the sandbox's figures) and slirp4netns. `node bench/isolation-cost.mjs [--samples N] [--tasks N]`
// prints JSON; `npm run bench` (full) runs it and writes its table to BENCHMARKS.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (file) => path.join(root, 'dist', file);
const { createSessionIsolation, endSessionNetworks, sessionNetworksDir } = await import(
  dist('command-host/containment/session-isolation.js')
);
const { createSandbox } = await import(dist('command-host/containment/sandbox.js'));
const { supervisorPath, launcherProgram } = await import(dist('command-host/supervisor/supervisor.js'));
const { sessionKey } = await import(dist('client/ownership.js'));

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const SAMPLES = option('--samples', 200);
const TASKS = option('--tasks', 100);

const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-isolation-cost-')));
process.env.DURABLE_BASH_RUN_DIR ??= path.join(scratch, 'run');
const spillDir = path.join(scratch, 'spill');
const workdir = mkdtempSync(path.join(scratch, 'work-'));

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const ms = (n) => Number(n.toFixed(2));

function timeRuns(argv) {
  const times = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = process.hrtime.bigint();
    const ran = spawnSync(argv[0], argv.slice(1), { cwd: workdir, stdio: 'ignore' });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (ran.status !== 0) throw new Error(`${argv.join(' ')} exited ${ran.status}`);
  }
  return { p50: ms(percentile(times, 50)), p95: ms(percentile(times, 95)) };
}

function pssKiB(pid) {
  try {
    return Number(/^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function descendants(pid) {
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

const comm = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};

/**
 * Starts TASKS chains running `sleep 600`; the PSS of their launcher processes, per task, and what
 * `measure` reads while they stand (a session's holder shares its binary's pages with them).
 */
async function standingCost(chain, measure = () => ({})) {
  const children = [];
  for (let i = 0; i < TASKS; i++) {
    const argv = await chain(i);
    children.push(spawn(argv[0], argv.slice(1), { cwd: workdir, stdio: 'ignore', detached: true }));
  }
  // Until every chain reached its command.
  for (let tries = 0; tries < 200; tries++) {
    const sleeping = children.filter((child) => descendants(child.pid).some((pid) => comm(pid) === 'sleep'));
    if (sleeping.length === children.length) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const measured = measure();
  let kib = 0;
  let processes = 0;
  for (const child of children)
    for (const pid of [child.pid, ...descendants(child.pid)])
      if (['bwrap', 'durable-bash-su'].includes(comm(pid))) {
        kib += pssKiB(pid);
        processes++;
      }
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  return {
    perTaskKiB: Number((kib / TASKS).toFixed(0)),
    processesPerTask: Number((processes / TASKS).toFixed(1)),
    ...measured,
  };
}

const spec = (n, session) => ({
  taskId: `bash-00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  command: 'true',
  workdir,
  background: true,
  taskQueue: 'q',
  lostAfterMs: 1,
  session,
});

const results = { samples: SAMPLES, tasks: TASKS, start: {}, memory: {} };
try {
  results.start.none = timeRuns(['bash', '-c', 'true']);

  // The workdir is handed to the session (an idmapped mount), as a project under dev's root is.
  const isolation = createSessionIsolation({ workdirRoots: [scratch] }, supervisorPath(), spillDir);
  const session = sessionKey('isolation-cost');
  await isolation.launch(spec(0, session)); // The session's network, made once.
  const launches = [];
  for (let i = 1; i <= SAMPLES; i++) {
    const started = process.hrtime.bigint();
    await isolation.launch(spec(i, session));
    launches.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  results.start.launchBuild = { p50: ms(percentile(launches, 50)), p95: ms(percentile(launches, 95)) };
  const sessionChain = async (n) => {
    const launch = await isolation.launch(spec(n, session));
    return [...launcherProgram({ ...launch, innerBinary: isolation.supervisor }), 'bash', '-c', 'true'];
  };
  results.start.session = timeRuns(await sessionChain(SAMPLES + 1));

  const sandbox = createSandbox(
    { workdirRoots: [scratch] },
    supervisorPath(),
    path.join(scratch, 'sandbox-spill'),
  );
  const sandboxChain = [
    ...launcherProgram({ ...sandbox.launch({ workdir }), innerBinary: sandbox.supervisor }),
    'bash',
    '-c',
    'true',
  ];
  results.start.sandbox = timeRuns(sandboxChain);

  const sleeping = (argv) => [...argv.slice(0, -1), 'exec sleep 600'];
  // A session's network: its slirp4netns and the holder of its namespace (and a relay, with
  // allowed ports), as its record names them.
  const records = () =>
    readdirSync(sessionNetworksDir(spillDir))
      .filter((file) => file.endsWith('.net.json'))
      .map((file) => JSON.parse(readFileSync(path.join(sessionNetworksDir(spillDir), file), 'utf8')));
  const perSession = (role) => {
    const all = records();
    return all.reduce((sum, record) => sum + pssKiB(record[role]?.pid), 0) / all.length;
  };
  const { holderKiB, ...standing } = await standingCost(
    async (n) => sleeping(await sessionChain(10_000 + n)),
    () => ({ holderKiB: perSession('holder') }),
  );
  results.memory.session = standing;
  results.memory.holderPerSessionKiB = holderKiB;
  results.memory.sandbox = await standingCost(async () => sleeping(sandboxChain));

  results.memory.networkPerSessionKiB = perSession('slirp');
  const allowing = createSessionIsolation(
    { allowedPorts: [5432] },
    supervisorPath(),
    path.join(scratch, 'spill-ports'),
  );
  await allowing.launch(spec(0, sessionKey('with a port')));
  const relays = spawnSync('pgrep', ['-f', `durable-bash-supervisor --session-net`], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .filter(Boolean)
    .map(Number);
  results.memory.relayPerSessionKiB =
    relays.reduce((sum, pid) => sum + pssKiB(pid), 0) / Math.max(1, relays.length);
  endSessionNetworks(path.join(scratch, 'spill-ports'));
} finally {
  endSessionNetworks(spillDir);
  rmSync(scratch, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
