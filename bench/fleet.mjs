// `npm run bench:fleet [-- options]`: a fleet-shaped load on the PostgreSQL-backed cluster of
// test/cluster/cluster-env.ts (issue 13; DESIGN.md §4, "5,000 idle tasks across 5 hosts").
//
// Starts the cluster and --hosts `durable-bash worker` processes (distinct host ids and spill
// directories, one task queue), then --tasks idle background tasks (`sleep 3607`) through
// `createBashTools` from --callers concurrent agent callers (sessions of 10 tasks each), and
// measures: the time until all run (supervisors' state records with a command pid), the spread
// over the hosts, the server's cost per idle task per minute over --window-s (its Prometheus
// metrics), each worker's RSS and the supervisors' PSS, and a restart of the busiest host's worker
// (SIGKILL, started again with the same host id and spill directory): a sample of its tasks
// readable, one killed, every one of its commands re-attached (a heartbeat after the restart).
// Then it kills every task, stops the workers and the cluster, and checks no process is left.
//
//   --tasks N        idle background tasks (default 5000)
//   --hosts N        worker hosts (default 5)
//   --callers N      concurrent agent callers in this process, each its own client (default 8)
//   --window-s S     the idle server-cost window (default 240: one whole period of an idle task's writes)
//   --sample N       tasks of the restarted host read after the restart (default 50)
//   --json FILE      where the results go (default bench/results/fleet.json)
//
// Needs `npm run build` and `bash scripts/provision-cluster.sh` (npm run bench:fleet builds).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { runnerImport } from 'vite';
import { createBashTools } from '../dist/index.js';
import { machine, software } from './lib/report.mjs';

/** From the last start until an idle task's writes are in their steady period (300 s timeout - 240 s period, plus slack). */
const STEADY_AFTER_MS = 65_000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root); // cluster-env.ts reads deploy/dynamicconfig.yaml relative to the tree.

const COMMAND = 'sleep 3607';
const SESSION_TASKS = 10;
const UNAVAILABLE = '[task worker unavailable:';
const SUPERVISOR = 'dist/bin/durable-bash-supervisor';
const RUNNING_DEADLINE_MS = 40 * 60_000;
const RESTART_DEADLINE_MS = 180_000;
const STOP_DEADLINE_MS = 10 * 60_000;

function parse(argv) {
  const options = {
    tasks: 5000,
    hosts: 5,
    callers: 8,
    windowS: 240,
    sample: 50,
    json: path.join(root, 'bench/results/fleet.json'),
  };
  const numbers = {
    '--tasks': 'tasks',
    '--hosts': 'hosts',
    '--callers': 'callers',
    '--window-s': 'windowS',
    '--sample': 'sample',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
      process.stdout.write(`${text.split('\nimport ')[0].replaceAll(/^\/\/ ?/gm, '')}\n`);
      process.exit(0);
    }
    const value = argv[++i];
    if (value === undefined) fail(`${arg} needs a value`);
    if (arg === '--json') options.json = path.resolve(value);
    else if (numbers[arg]) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) fail(`${arg} needs a positive integer`);
      options[numbers[arg]] = n;
    } else fail(`unknown option ${arg} (see --help)`);
  }
  return options;
}

function fail(message) {
  process.stderr.write(`bench:fleet: ${message}\n`);
  process.exit(2);
}

const startedAt = Date.now();
const log = (message) =>
  process.stdout.write(`[fleet +${((Date.now() - startedAt) / 1000).toFixed(0)}s] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'n/a');
const mib = (bytes) => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
const text = (result) => result.content.map((block) => block.text).join('');
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const round = (n, digits = 3) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

/** Runs `work` over `items` with `width` concurrent callers; each takes the next item. */
async function inLanes(items, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

// ---- /proc and the spill directories ----

function readProc(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}
const rssBytes = (pid) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readProc(pid, 'status'))?.[1] ?? Number.NaN) * 1024;
function startTimeOf(pid) {
  const stat = readProc(pid, 'stat');
  return stat === '' ? undefined : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}
function alive(pid) {
  const stat = readProc(pid, 'stat');
  return stat !== '' && stat[stat.lastIndexOf(')') + 2] !== 'Z';
}

/** Every process whose command line matches `test`: pid, argv, PSS. */
function processes(test, withPss = false) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = readProc(entry, 'cmdline').split('\0').filter(Boolean);
    if (args.length === 0 || !test(args)) continue;
    const pss = withPss
      ? Number(/^Pss:\s+(\d+) kB$/m.exec(readProc(entry, 'smaps_rollup'))?.[1] ?? 0) * 1024
      : 0;
    found.push({ pid: Number(entry), args, pss });
  }
  return found;
}

/** A host's tasks whose command runs (its state record names the command's pid); read until started. */
class StartedRecords {
  started = new Map();
  constructor(spillDir) {
    this.spillDir = spillDir;
  }
  scan() {
    let names = [];
    try {
      names = readdirSync(this.spillDir);
    } catch {
      return this.started;
    }
    for (const name of names) {
      if (!name.endsWith('.state')) continue;
      const taskId = name.slice(0, -'.state'.length);
      if (this.started.has(taskId)) continue;
      try {
        const record = JSON.parse(readFileSync(path.join(this.spillDir, name), 'utf8'));
        if (record.pid > 0) this.started.set(taskId, { ...record, seenAt: Date.now() });
      } catch {
        // Being written: next time.
      }
    }
    return this.started;
  }
}

/**
 * The pids of the live supervisors the state records in these spill dirs name (same start time).
 * A supervisor's command line does not name its spill dir when its worker's nursery started it.
 */
function supervisorPidsOf(spillDirs) {
  const pids = new Set();
  for (const spillDir of spillDirs) {
    let names = [];
    try {
      names = readdirSync(spillDir).filter((name) => name.endsWith('.state'));
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const record = JSON.parse(readFileSync(path.join(spillDir, name), 'utf8'));
        if (record.supervisorPid > 0 && startTimeOf(record.supervisorPid) === record.supervisorStart)
          pids.add(record.supervisorPid);
      } catch {
        // Gone, or being written.
      }
    }
  }
  return pids;
}

/** This run's supervisors (with their PSS when asked). */
function supervisorsOfRun(hosts, withPss = false) {
  const pids = supervisorPidsOf(hosts.map((h) => h.spillDir));
  return processes((args) => args[0]?.endsWith('durable-bash-supervisor'), withPss).filter((p) =>
    pids.has(p.pid),
  );
}

/** SIGKILLs the command groups and supervisors the state records in `spillDir` name (same start time). */
function endLeftovers(spillDir) {
  let ended = 0;
  let names = [];
  try {
    names = readdirSync(spillDir).filter((name) => name.endsWith('.state'));
  } catch {
    return 0;
  }
  for (const name of names) {
    try {
      const record = JSON.parse(readFileSync(path.join(spillDir, name), 'utf8'));
      if (record.pid > 0 && startTimeOf(record.pid) === record.pidStart) {
        process.kill(-record.pid, 'SIGKILL');
        ended++;
      }
      if (record.supervisorPid > 0 && startTimeOf(record.supervisorPid) === record.supervisorStart)
        process.kill(record.supervisorPid, 'SIGKILL');
    } catch {
      // Gone, or being written.
    }
  }
  return ended;
}

// ---- the server's metrics ----

function parsePrometheus(body) {
  const samples = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]] = label[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

const named = (name, base) => name === base || name === `temporal_${base}`;

/** Frontend calls by operation and persistence UpdateWorkflowExecution requests (any service). */
async function counters(metricsUrl) {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`${metricsUrl}: HTTP ${response.status}`);
  const result = { frontend: {}, updateWrites: 0, updateWritesByService: {} };
  for (const sample of parsePrometheus(await response.text())) {
    const operation = sample.labels.operation ?? '';
    if (named(sample.name, 'service_requests') && sample.labels.service_name === 'frontend') {
      result.frontend[operation] = (result.frontend[operation] ?? 0) + sample.value;
    } else if (named(sample.name, 'persistence_requests') && operation === 'UpdateWorkflowExecution') {
      result.updateWrites += sample.value;
      const service = sample.labels.service_name ?? '?';
      result.updateWritesByService[service] = (result.updateWritesByService[service] ?? 0) + sample.value;
    }
  }
  return result;
}

function costOver(before, after, tasks, minutes) {
  const byOperation = {};
  for (const [operation, value] of Object.entries(after.frontend)) {
    const delta = value - (before.frontend[operation] ?? 0);
    if (delta !== 0) byOperation[operation] = delta;
  }
  const sum = (filter) =>
    Object.entries(byOperation)
      .filter(([operation]) => filter(operation))
      .reduce((total, [, value]) => total + value, 0);
  const frontendCalls = sum(() => true);
  const longPolls = sum((operation) => /^Poll/.test(operation));
  const heartbeats = sum((operation) => /^RecordActivityTaskHeartbeat/.test(operation));
  const visibilityQueries = sum((operation) => /^(List|Count|Scan)WorkflowExecutions/.test(operation));
  const updateWrites = after.updateWrites - before.updateWrites;
  const per = (n) => round(n / tasks / minutes, 4);
  return {
    minutes: round(minutes, 2),
    frontendCalls,
    longPolls,
    heartbeats,
    visibilityQueries,
    updateWrites,
    perTaskPerMinute: {
      frontendCalls: per(frontendCalls),
      frontendCallsWithoutLongPolls: per(frontendCalls - longPolls),
      heartbeats: per(heartbeats),
      updateWrites: per(updateWrites),
    },
    byOperation,
  };
}

// ---- workers ----

const WORKER_ERROR =
  /"level":"(error|fatal)"|\bERROR\b|\berror\b|Error:|UNAVAILABLE|DEADLINE_EXCEEDED|RESOURCE_EXHAUSTED/;

class WorkerHost {
  constructor({ index, address, namespace, taskQueue, logDir }) {
    this.hostId = `fleet-host-${index + 1}`;
    this.spillDir = mkdtempSync(path.join(os.tmpdir(), `durable-bash-fleet-${this.hostId}-`));
    this.logFile = path.join(logDir, `${this.hostId}.log`);
    this.args = [
      path.join(root, 'dist/cli/main.js'),
      'worker',
      '--address',
      address,
      '--namespace',
      namespace,
      '--task-queue',
      taskQueue,
      '--host-id',
      this.hostId,
      '--spill-dir',
      this.spillDir,
    ];
    this.records = new StartedRecords(this.spillDir);
    this.peakRss = 0;
  }

  /** Starts the worker; resolves once its log says it polls. */
  async start() {
    const before = this.logText().length;
    const fd = openSync(this.logFile, 'a');
    this.child = spawn(process.execPath, this.args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const added = this.logText().slice(before);
      if (added.includes('worker polling')) break;
      if (this.exited()) throw new Error(`${this.hostId}: worker exited: ${added.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`${this.hostId}: worker not polling in 120 s`);
      await sleep(100);
    }
    this.logStart = before;
    this.idleRss = rssBytes(this.child.pid);
  }

  exited() {
    return !this.child || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  logText() {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  rss() {
    const bytes = this.exited() ? Number.NaN : rssBytes(this.child.pid);
    if (bytes > this.peakRss) this.peakRss = bytes;
    return bytes;
  }

  async crash() {
    if (this.exited()) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000) {
    if (this.exited()) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await Promise.race([exited, sleep(graceMs)]);
    await this.crash();
  }

  /** Lines of its log since `from` that look like errors, with counts of the distinct ones. */
  errors(from = 0) {
    const lines = this.logText()
      .slice(from)
      .split('\n')
      .filter((line) => WORKER_ERROR.test(line));
    const distinct = new Map();
    for (const line of lines) {
      const key = line
        .replace(/\d+/g, 'N')
        .replace(/bash-[0-9a-fN-]{20,}/g, '<task>')
        .slice(0, 300);
      distinct.set(key, (distinct.get(key) ?? 0) + 1);
    }
    return {
      count: lines.length,
      distinct: [...distinct]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([line, count]) => ({ count, line })),
    };
  }
}

// ---- the run ----

async function main() {
  const options = parse(process.argv.slice(2));
  const result = {
    command: `npm run bench:fleet${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    date: new Date().toISOString(),
    machine: machine(),
    software: software(root),
    options: { ...options, json: path.relative(root, options.json) },
    figures: {},
    problems: [],
  };
  const problem = (message) => {
    log(`PROBLEM: ${message}`);
    result.problems.push(message);
  };
  log(`${options.tasks} tasks on ${options.hosts} hosts from ${options.callers} callers`);

  const logDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-fleet-logs-'));
  result.logDir = logDir;
  let cluster;
  const connections = [];
  const hosts = [];
  let sampler;
  const ids = [];
  const killedIds = []; // killed during the run: no longer in ids
  const owner = new Map(); // task id -> its caller's tools and exec context
  const teardown = { done: false };

  const finish = async () => {
    if (teardown.done) return;
    teardown.done = true;
    clearInterval(sampler);
    // Every task ends: a cancel of its workflow (what bash_kill sends), then what records name.
    const killStart = Date.now();
    const client = connections[0]
      ? new Client({ connection: connections[0], namespace: 'default' })
      : undefined;
    if (client && cluster) {
      // Also tasks whose start the tool reported failed (a client-side deadline) but that run.
      const known = new Set([...ids, ...killedIds]);
      const orphans = hosts.flatMap((host) => [...host.records.scan().keys()].filter((id) => !known.has(id)));
      if (orphans.length > 0)
        problem(`${orphans.length} tasks run whose \`bash\` call answered with an error`);
      await inLanes([...ids, ...orphans], 32, (id) =>
        client.workflow
          .getHandle(id)
          .cancel()
          .catch(() => undefined),
      );
      const mine = () => supervisorsOfRun(hosts);
      const deadline = Date.now() + STOP_DEADLINE_MS;
      let left = mine().length;
      while (left > 0 && Date.now() < deadline) {
        await sleep(1000);
        left = mine().length;
      }
      result.figures.killAll = {
        tasks: ids.length + orphans.length,
        goneMs: left === 0 ? Date.now() - killStart : null,
        left,
      };
      log(
        `kill all: ${left === 0 ? `every supervisor gone in ${seconds(Date.now() - killStart)}` : `${left} supervisors left`}`,
      );
      if (left > 0)
        problem(`${left} supervisors still running ${seconds(STOP_DEADLINE_MS)} after the cancels`);
    }
    result.stopErrors = {};
    for (const host of hosts) {
      const before = host.logText().length;
      await host.stop();
      const stopErrors = host.errors(before);
      if (stopErrors.count > 0) result.stopErrors[host.hostId] = stopErrors;
    }
    let forced = 0;
    for (const host of hosts) forced += endLeftovers(host.spillDir);
    if (forced > 0) problem(`${forced} command groups SIGKILLed by their state records at the end`);
    for (const connection of connections) await connection.close().catch(() => undefined);
    if (cluster) {
      result.serverErrors = serverErrors(cluster);
      await cluster.stop().catch((err) => problem(`cluster stop: ${err.message}`));
    }
    await sleep(500);
    const leftSupervisors = processes((args) => args[0]?.endsWith('durable-bash-supervisor'));
    const mineLeft = supervisorsOfRun(hosts);
    const sleeps = processes((args) => args.join(' ') === COMMAND);
    const workersLeft = hosts.filter((h) => !h.exited());
    result.leftOver = {
      supervisorsOfThisRun: mineLeft.length,
      supervisorsOfOtherRuns: leftSupervisors.length - mineLeft.length,
      commands: sleeps.length,
      workers: workersLeft.length,
      pgrep: pgrepReport(),
    };
    if (mineLeft.length + sleeps.length + workersLeft.length > 0)
      problem(
        `left over: ${mineLeft.length} supervisors, ${sleeps.length} \`${COMMAND}\`, ${workersLeft.length} workers`,
      );
    else log(`nothing left: no supervisor of this run, no \`${COMMAND}\`, no worker`);
    for (const host of hosts) rmSync(host.spillDir, { recursive: true, force: true });
  };

  const onSignal = (signal) => {
    log(`${signal}: ending everything`);
    problem(`interrupted by ${signal}`);
    finish().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // 1. The cluster and the hosts.
    const { module: clusterEnv } = await runnerImport(path.join(root, 'test/cluster/cluster-env.ts'), {
      configFile: false,
      logLevel: 'warn',
    });
    let t = Date.now();
    cluster = await clusterEnv.startCluster();
    log(`cluster ready in ${seconds(Date.now() - t)} at ${cluster.address}`);
    result.figures.clusterReadyMs = Date.now() - t;
    const taskQueue = `fleet-${Date.now().toString(36)}`;
    t = Date.now();
    for (let i = 0; i < options.hosts; i++) {
      const host = new WorkerHost({
        index: i,
        address: cluster.address,
        namespace: cluster.namespace,
        taskQueue,
        logDir,
      });
      hosts.push(host);
    }
    await Promise.all(hosts.map((host) => host.start()));
    log(`${hosts.length} workers polling in ${seconds(Date.now() - t)}`);
    await sleep(2000);
    for (const host of hosts) host.idleRss = host.rss();

    // 2. The burst: every caller its own client, tools and sessions of 10 tasks.
    const callers = [];
    for (let c = 0; c < options.callers; c++) {
      const connection = await Connection.connect({ address: cluster.address });
      connections.push(connection);
      const client = new Client({ connection, namespace: cluster.namespace });
      const tools = Object.fromEntries(
        createBashTools({ client, taskQueue }).map((tool) => [tool.name, tool]),
      );
      callers.push({ tools, items: [] });
    }
    for (let i = 0; i < options.tasks; i++) {
      const c = i % options.callers;
      const session = `fleet-agent-${c + 1}-session-${Math.floor(i / (options.callers * SESSION_TASKS))}`;
      callers[c].items.push({ agent: { sessionId: session } });
    }
    /** Started tasks whose command runs (a start the tool reported failed may run too: not counted). */
    const runningCount = () => {
      for (const host of hosts) host.records.scan();
      return ids.filter((id) => hosts.some((host) => host.records.started.has(id))).length;
    };
    const startLatencies = [];
    const startErrors = new Map();
    const startFailures = [];
    const burstStart = Date.now();
    let returnedMs = Number.NaN;
    let lastProgress = 0;
    sampler = setInterval(() => {
      for (const host of hosts) host.rss();
    }, 1000);
    const starting = Promise.all(
      callers.map(async (caller) => {
        for (const exec of caller.items) {
          const callStart = performance.now();
          try {
            const answer = await caller.tools.bash.execute(
              { command: COMMAND, description: 'Fleet idle task', run_in_background: true },
              exec,
            );
            const id = /^started background task (\S+)$/.exec(text(answer))?.[1];
            if (answer.isError || !id) throw new Error(text(answer).slice(0, 200));
            startLatencies.push(performance.now() - callStart);
            ids.push(id);
            owner.set(id, { tools: caller.tools, exec });
          } catch (err) {
            const key = String(err?.message ?? err).slice(0, 200);
            startErrors.set(key, (startErrors.get(key) ?? 0) + 1);
            startFailures.push(Date.now() - burstStart);
          }
        }
      }),
    ).then(() => {
      returnedMs = Date.now() - burstStart;
      log(
        `every start returned in ${seconds(returnedMs)}: ${ids.length} ids, ${options.tasks - ids.length} failed`,
      );
    });
    let startsDone = false;
    starting.then(() => {
      startsDone = true;
    });
    let running = 0;
    while (Date.now() - burstStart < RUNNING_DEADLINE_MS) {
      running = runningCount();
      if (startsDone && running >= ids.length) break;
      if (Date.now() - lastProgress >= 15_000) {
        lastProgress = Date.now();
        log(`burst: ${ids.length} started, ${running} running`);
      }
      await sleep(500);
    }
    await starting;
    const runningMs = running >= ids.length ? Date.now() - burstStart : Number.NaN;
    if (!(running >= ids.length))
      problem(`${running} of ${ids.length} running at the ${seconds(RUNNING_DEADLINE_MS)} deadline`);
    for (const [message, count] of startErrors) problem(`${count} starts failed: ${message}`);
    const spread = Object.fromEntries(hosts.map((host) => [host.hostId, host.records.started.size]));
    const hostDoneMs = Object.fromEntries(
      hosts.map((host) => [
        host.hostId,
        Math.max(0, ...[...host.records.started.values()].map((r) => r.seenAt - burstStart)),
      ]),
    );
    result.figures.burst = {
      tasks: options.tasks,
      started: ids.length,
      failedStarts: Object.fromEntries(startErrors),
      returnedMs,
      runningMs,
      startsPerSecond: round(ids.length / (returnedMs / 1000), 1),
      startLatencyMs: {
        p50: round(percentile(startLatencies, 0.5), 1),
        p99: round(percentile(startLatencies, 0.99), 1),
        max: round(Math.max(...startLatencies), 1),
        over1s: startLatencies.filter((ms) => ms > 1000).length,
        over3s: startLatencies.filter((ms) => ms > 3000).length,
      },
      failedAtMs: startFailures,
      spread,
      hostLastRunningMs: hostDoneMs,
    };
    log(
      `all ${running} running ${seconds(runningMs)} after the first start; spread ${JSON.stringify(spread)}`,
    );

    // 3. The idle window: the server's cost per idle task per minute, once the last task to start has
    // had its first heartbeat-timer firing (STEADY_AFTER_MS: see budgets.bench.ts's costWindow).
    await sleep(STEADY_AFTER_MS);
    const before = await counters(cluster.metricsUrl);
    const windowStart = Date.now();
    log(`idle window: ${options.windowS} s`);
    await sleep(options.windowS * 1000);
    const after = await counters(cluster.metricsUrl);
    const runningTasks = hosts.reduce((n, host) => n + host.records.started.size, 0);
    const cost = costOver(before, after, runningTasks, (Date.now() - windowStart) / 60_000);
    result.figures.idleCost = cost;
    log(
      `idle cost per task per minute: ${cost.perTaskPerMinute.heartbeats} heartbeats, ${cost.perTaskPerMinute.updateWrites} execution writes, ${cost.perTaskPerMinute.frontendCalls} frontend calls (${cost.perTaskPerMinute.frontendCallsWithoutLongPolls} without long polls)`,
    );

    // 4. Memory: each worker's RSS, the supervisors' PSS.
    const supervisors = supervisorsOfRun(hosts, true);
    const pss = supervisors.reduce((total, p) => total + p.pss, 0);
    result.figures.memory = {
      workers: Object.fromEntries(
        hosts.map((host) => [
          host.hostId,
          {
            tasks: spread[host.hostId],
            idleRssBytes: host.idleRss,
            rssBytes: host.rss(),
            peakRssBytes: host.peakRss,
          },
        ]),
      ),
      supervisors: supervisors.length,
      supervisorsPssBytes: pss,
      supervisorPssPerTaskBytes: Math.round(pss / Math.max(1, supervisors.length)),
      commands: processes((args) => args.join(' ') === COMMAND).length,
      workerPeakGrowthPerTaskBytes: Math.round(
        hosts.reduce((total, host) => total + host.peakRss - host.idleRss, 0) / Math.max(1, ids.length),
      ),
      workerGrowthPerTaskBytes: Math.round(
        hosts.reduce((total, host) => total + host.rss() - host.idleRss, 0) / Math.max(1, ids.length),
      ),
    };
    log(
      `memory: workers ${hosts.map((h) => mib(h.rss())).join(', ')}; ${supervisors.length} supervisors' PSS ${mib(pss)} (${(pss / Math.max(1, supervisors.length) / 1024).toFixed(0)} KiB each)`,
    );

    // 5. The busiest host's worker SIGKILLed and started again under its tasks.
    const victim = hosts.reduce((a, b) => (b.records.started.size > a.records.started.size ? b : a));
    const victimIds = [...victim.records.started.keys()].filter((id) => owner.has(id));
    const step = Math.max(1, Math.floor(victimIds.length / options.sample));
    const sample = victimIds.filter((_, i) => i % step === 0).slice(0, options.sample);
    log(`restart: ${victim.hostId} under ${victimIds.length} tasks`);
    const killedAt = Date.now();
    await victim.crash();
    const restartedAt = Date.now();
    await victim.start();
    const pollingMs = Date.now() - restartedAt;
    const readableMs = new Map();
    const readAnswers = new Map();
    while (readableMs.size < sample.length && Date.now() - restartedAt < RESTART_DEADLINE_MS) {
      await inLanes(
        sample.filter((id) => !readableMs.has(id)),
        options.callers,
        async (id) => {
          const { tools, exec } = owner.get(id);
          try {
            const answer = await tools.bash_output.execute({ task_id: id }, exec);
            readAnswers.set(id, text(answer).slice(0, 200));
            if (!answer.isError && !text(answer).includes(UNAVAILABLE))
              readableMs.set(id, Date.now() - restartedAt);
          } catch (err) {
            readAnswers.set(id, String(err).slice(0, 200));
          }
        },
      );
      if (readableMs.size < sample.length) await sleep(250);
    }
    const killId = sample[0];
    const killRecord = victim.records.started.get(killId);
    const killStart = Date.now();
    const { tools: killTools, exec: killExec } = owner.get(killId);
    const killAnswer = text(await killTools.bash_kill.execute({ task_id: killId }, killExec));
    while (alive(killRecord.supervisorPid) && Date.now() - killStart < 10_000) await sleep(10);
    const killMs = Date.now() - killStart;
    const killed = killAnswer === `killed background task ${killId}` && !alive(killRecord.supervisorPid);
    // Every one of its commands re-attached: the command activity's heartbeat after the restart.
    const client = new Client({ connection: connections[0], namespace: cluster.namespace });
    const attachedMs = new Map();
    const rest = victimIds.filter((id) => id !== killId);
    while (attachedMs.size < rest.length && Date.now() - restartedAt < RESTART_DEADLINE_MS) {
      await inLanes(
        rest.filter((id) => !attachedMs.has(id)),
        16,
        async (id) => {
          try {
            const { raw } = await client.workflow.getHandle(id).describe();
            const activity = raw.pendingActivities?.find((a) => a.activityType?.name === 'runCommand');
            const beat = timestampMs(activity?.lastHeartbeatTime);
            if (beat !== undefined && beat >= killedAt) attachedMs.set(id, beat - restartedAt);
          } catch {
            // Next round.
          }
        },
      );
      if (attachedMs.size < rest.length) await sleep(1000);
    }
    const readable = readableMs.size === sample.length;
    const attached = attachedMs.size === rest.length;
    // What the server says of the ones that did not re-attach (their pending command attempts).
    const notReattached = [];
    for (const id of rest.filter((id) => !attachedMs.has(id)).slice(0, 5)) {
      const { raw } = await client.workflow
        .getHandle(id)
        .describe()
        .catch(() => ({ raw: {} }));
      notReattached.push({
        id,
        pending: (raw.pendingActivities ?? []).map((a) => ({
          activityId: a.activityId,
          type: a.activityType?.name,
          state: a.state,
          attempt: a.attempt,
          lastStartedMs: timestampMs(a.lastStartedTime),
          lastHeartbeatMs: timestampMs(a.lastHeartbeatTime),
          scheduledMs: timestampMs(a.scheduledTime),
          lastFailure: a.lastFailure?.message,
          lastWorker: a.lastWorkerIdentity,
        })),
        killedAtMs: killedAt,
        restartedAtMs: restartedAt,
      });
    }
    const restartErrors = victim.errors(victim.logStart);
    result.figures.restart = {
      host: victim.hostId,
      tasks: victimIds.length,
      workerPollingMs: pollingMs,
      killToRestartMs: restartedAt - killedAt,
      sample: sample.length,
      readable: readableMs.size,
      readableMs: readable ? Math.max(...readableMs.values()) : null,
      notReadable: sample
        .filter((id) => !readableMs.has(id))
        .slice(0, 3)
        .map((id) => readAnswers.get(id)),
      kill: { answer: killAnswer, gone: killed, ms: killMs },
      reattached: attachedMs.size,
      reattachedOf: rest.length,
      notReattached,
      reattachMs: {
        p50: round(percentile([...attachedMs.values()], 0.5), 0),
        max: attached ? Math.max(...attachedMs.values()) : null,
      },
      workerLogErrors: restartErrors,
    };
    log(
      `restart: polling after ${seconds(pollingMs)}; ${readableMs.size}/${sample.length} readable after ${seconds(result.figures.restart.readableMs ?? Number.NaN)}; kill ${killed ? 'ok' : `FAILED (${killAnswer.slice(0, 100)})`} in ${killMs} ms; ${attachedMs.size}/${rest.length} re-attached (heartbeat after the restart), last ${seconds(result.figures.restart.reattachMs.max ?? Number.NaN)} after it; ${restartErrors.count} error lines in its log`,
    );
    if (!readable)
      problem(
        `${sample.length - readableMs.size} of ${sample.length} sampled tasks not readable after the restart`,
      );
    if (!killed) problem(`bash_kill after the restart: ${killAnswer.slice(0, 200)}`);
    if (!attached)
      problem(
        `${rest.length - attachedMs.size} of ${rest.length} tasks not re-attached ${seconds(RESTART_DEADLINE_MS)} after the restart`,
      );
    ids.splice(ids.indexOf(killId), 1);
    killedIds.push(killId);

    // 6. What the logs say.
    result.workerLogErrors = Object.fromEntries(hosts.map((host) => [host.hostId, host.errors()]));
  } catch (err) {
    problem(`the run failed: ${err?.stack ?? err}`);
  } finally {
    await finish();
  }

  result.durationMs = Date.now() - startedAt;
  result.loadAverageAtEnd = os.loadavg().map((n) => round(n, 2));
  result.table = table(result);
  process.stdout.write(`\n${result.table}\n`);
  if (result.problems.length > 0)
    process.stdout.write(`\nproblems:\n${result.problems.map((p) => `- ${p}`).join('\n')}\n`);
  mkdirSync(path.dirname(options.json), { recursive: true });
  writeFileSync(options.json, `${JSON.stringify(result, null, 2)}\n`);
  // A JSON file in the tree is linted (biome check .): written in the project's format.
  if (!path.relative(root, options.json).startsWith('..'))
    spawnSync(path.join(root, 'node_modules/.bin/biome'), ['format', '--write', options.json], {
      cwd: root,
      stdio: 'ignore',
    });
  log(`results in ${path.relative(process.cwd(), options.json)}; logs in ${logDir}`);
  process.exitCode = result.problems.length > 0 ? 1 : 0;
}

function timestampMs(ts) {
  if (!ts?.seconds) return undefined;
  return Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

/** The server log's error lines (its level is warn), counted by message. */
function serverErrors(cluster) {
  const lines = cluster
    .serverLogTail(1_000_000)
    .split('\n')
    .filter((line) => /"level":"(error|fatal|dpanic|panic)"/.test(line));
  const byMessage = new Map();
  const samples = new Map(); // each message's first line (the log goes with the cluster; cut to 400 characters)
  for (const line of lines) {
    const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? line.slice(0, 200);
    byMessage.set(message, (byMessage.get(message) ?? 0) + 1);
    if (!samples.has(message)) samples.set(message, line);
  }
  return {
    count: lines.length,
    byMessage: Object.fromEntries([...byMessage].sort((a, b) => b[1] - a[1]).slice(0, 10)),
    samples: Object.fromEntries([...samples].slice(0, 10)),
  };
}

function pgrepReport() {
  const pgrep = (pattern) => {
    try {
      return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean)
        .length;
    } catch {
      return 0; // pgrep exits 1 when nothing matches.
    }
  };
  return { [SUPERVISOR]: pgrep(SUPERVISOR), [COMMAND]: pgrep(`^${COMMAND}$`) };
}

function table(result) {
  const f = result.figures;
  const rows = [];
  const row = (measure, value, target = '', holds = null) =>
    rows.push([measure, value, target, holds === null ? '' : holds ? 'yes' : 'no']);
  const n = result.options.tasks;
  const hosts = result.options.hosts;
  if (f.burst) {
    const b = f.burst;
    row(
      `${n} idle \`${COMMAND}\` tasks from ${result.options.callers} callers: all running`,
      `${seconds(b.runningMs)} after the first start (every start returned in ${seconds(b.returnedMs)}, ${b.startsPerSecond}/s; start p50 ${b.startLatencyMs.p50} ms, p99 ${b.startLatencyMs.p99} ms; ${n - b.started} failed)`,
    );
    row(
      `spread over ${hosts} hosts`,
      Object.entries(b.spread)
        .map(([host, count]) => `${host.replace('fleet-host-', 'h')} ${count}`)
        .join(', '),
    );
  }
  if (f.idleCost) {
    const c = f.idleCost.perTaskPerMinute;
    row(
      'idle server cost: heartbeats per task per minute',
      `${c.heartbeats} (${f.idleCost.heartbeats} in ${f.idleCost.minutes} min)`,
      '<= 1',
      c.heartbeats <= 1,
    );
    row(
      'idle server cost: UpdateWorkflowExecution writes per task per minute',
      `${c.updateWrites} (${f.idleCost.updateWrites} in ${f.idleCost.minutes} min)`,
      '<= 1',
      c.updateWrites <= 1,
    );
    row(
      'idle server cost: frontend calls per task per minute',
      `${c.frontendCalls} all (${c.frontendCallsWithoutLongPolls} without long polls; ${f.idleCost.visibilityQueries} visibility queries in the window)`,
    );
  }
  if (f.memory) {
    const m = f.memory;
    row(
      'worker RSS (idle before → with its tasks; peak)',
      Object.entries(m.workers)
        .map(
          ([host, w]) =>
            `${host.replace('fleet-host-', 'h')} ${mib(w.idleRssBytes)} → ${mib(w.rssBytes)} (${mib(w.peakRssBytes)})`,
        )
        .join(', '),
    );
    row(
      'memory per task: worker growth (to its peak) + supervisor PSS',
      `${((m.workerPeakGrowthPerTaskBytes + m.supervisorPssPerTaskBytes) / 1024).toFixed(0)} KiB = ${(m.workerPeakGrowthPerTaskBytes / 1024).toFixed(0)} KiB (${(m.workerGrowthPerTaskBytes / 1024).toFixed(0)} KiB after the idle window) + ${(m.supervisorPssPerTaskBytes / 1024).toFixed(0)} KiB (${m.supervisors} supervisors, ${mib(m.supervisorsPssBytes)}; ${m.commands} \`${COMMAND}\` processes)`,
      '<= 500 KB',
      m.workerPeakGrowthPerTaskBytes + m.supervisorPssPerTaskBytes <= 500_000,
    );
  }
  if (f.restart) {
    const r = f.restart;
    const within = r.readable === r.sample && r.readableMs <= 30_000 && r.kill.gone;
    row(
      `worker of ${r.host} SIGKILLed under its ${r.tasks} tasks, started again: ${r.sample} readable, one killed`,
      `${r.readable}/${r.sample} readable ${seconds(r.readableMs ?? Number.NaN)} after the restart began (polling after ${seconds(r.workerPollingMs)}); \`bash_kill\` ${r.kill.gone ? 'gone' : 'NOT gone'} in ${r.kill.ms} ms`,
      'within 30 s',
      within,
    );
    row(
      `… every one of its commands re-attached (a heartbeat after the restart)`,
      `${r.reattached}/${r.reattachedOf}, p50 ${seconds(r.reattachMs.p50 ?? Number.NaN)}, last ${seconds(r.reattachMs.max ?? Number.NaN)} after the restart began; ${r.workerLogErrors.count} error lines in its log`,
      'within 30 s',
      r.reattachMs.max !== null && r.reattachMs.max <= 30_000,
    );
  }
  if (f.killAll)
    row(
      `all ${f.killAll.tasks} tasks cancelled (32 at a time): every supervisor gone`,
      f.killAll.left === 0 ? seconds(f.killAll.goneMs) : `${f.killAll.left} left`,
    );
  const workerErrors = Object.values(result.workerLogErrors ?? {}).reduce((total, e) => total + e.count, 0);
  row('error lines: workers / server', `${workerErrors} / ${result.serverErrors?.count ?? 'n/a'}`);
  if (result.leftOver)
    row(
      'left after the end',
      `${result.leftOver.supervisorsOfThisRun} supervisors, ${result.leftOver.commands} \`${COMMAND}\`, ${result.leftOver.workers} workers`,
      'none',
      result.leftOver.supervisorsOfThisRun + result.leftOver.commands + result.leftOver.workers === 0,
    );
  const cell = (value) => String(value).replaceAll('|', '\\|');
  return [
    '| measure | result | target | holds |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

await main();
