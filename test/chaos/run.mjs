/**
 * `npm run test:chaos [-- --quick] [-- --seed N]`: the chaos suite. A Temporal dev server on a
 * database file, two command workers standing for two hosts, and an agent host holding the tools,
 * each its own OS process; background tasks, foreground runs and kills through the tools, while
 * the harness SIGKILLs and restarts the workers, the agent host and the server. Then it checks that
 * nothing was lost or run twice, that no process and no workflow was left behind, prints a table
 * and every defect, and exits non-zero on any defect. Expects a built dist/ (the npm script builds).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AgentLink } from './agent-link.mjs';
import { ChaosRun } from './chaos.mjs';
import {
  checkForeground,
  checkTask,
  DUPLICATED,
  expectsNotice,
  LOST,
  markerCounts,
  monitorNoticesOf,
  noticesById,
  OTHER,
  WRONG_STATUS,
} from './checks.mjs';
import { CommandWorker, HostNetwork, logsOf, TemporalServer, workerSupports } from './cluster.mjs';
import { snapshotDist } from './dist-snapshot.mjs';
import { parseOptions, seededRandom } from './options.mjs';
import { freePort, processesOfRun, stopGracefully, waitUntil } from './processes.mjs';
import { seconds, table, visibilityAcrossRestarts } from './report.mjs';

const started = Date.now();
const log = (message) =>
  process.stdout.write(`[chaos ${seconds(Date.now() - started).padStart(6)}] ${message}\n`);

const parsed = parseOptions(process.argv.slice(2));
// Notices retry with backoff up to a minute; a task ending near the end of the rounds needs its time.
const options = { ...parsed, drainMs: parsed.quick ? 180_000 : 240_000 };
const NOTICE_WAIT_MS = 150_000;
// How long a host may be gone before its tasks are given up as lost (passed when the worker takes
// the flag): longer than any downtime here (20 s + its start), so every re-attach is due.
const LOST_AFTER_MS = 120_000;

const runId = `chaos-${process.pid}-${options.seed}`;
const runDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-chaos-'));
// The tasks' workdir holds the marker: a command sees its workdir as this process does (its /tmp,
// with sessions kept apart, is its session's own).
const workDir = path.join(runDir, 'work');
mkdirSync(workDir);
const markerFile = path.join(workDir, 'marker');
// The sessions' networks of this run's workers, ended when the run ends (they outlive a worker).
process.env.DURABLE_BASH_RUN_DIR = path.join(runDir, 'sessions-run');
// The agent host's session cwd: the tasks run there.
process.env.CHAOS_WORKDIR = workDir;
const noticesFile = path.join(runDir, 'notices.jsonl');
const sessionId = `chaos-session-${options.seed}`;
writeFileSync(markerFile, '');
writeFileSync(noticesFile, '');

log(
  `seed ${options.seed} (replay: npm run test:chaos -- ${options.quick ? '--quick ' : ''}--seed ${options.seed})`,
);
log(
  `${options.quick ? 'quick' : 'full'} mode: ${options.tasks} tasks, ${options.rounds} rounds; run dir ${runDir}`,
);

const dist = snapshotDist(runDir);
const { dynamicConfigArgs, sqlitePragmaArgs } = await import(
  pathToFileURL(path.join(dist, 'dev-server/dynamic-config.js')).href
);
const hostIdFlag = await workerSupports(dist, '--host-id');
const lostAfterFlag = await workerSupports(dist, '--lost-after-ms');
if (!hostIdFlag || !lostAfterFlag)
  log(
    `the worker does not take ${[!hostIdFlag && '--host-id', !lostAfterFlag && '--lost-after-ms'].filter(Boolean).join(' or ')} yet; hosts differ by spill dir only`,
  );

const server = new TemporalServer({
  runDir,
  runId,
  port: await freePort(),
  uiPort: await freePort(),
  // The server as `durable-bash dev` runs it, database pragmas included (SIGKILLs must lose nothing).
  dynamicConfigArgs: [...dynamicConfigArgs(), ...(sqlitePragmaArgs?.() ?? [])],
});
// As root, each worker host gets a network of its own, so the run can cut it off from the server
// (a partition, beside the SIGKILLs); without root there is none, and no partitions.
const networks =
  process.getuid?.() === 0
    ? Object.fromEntries(['a', 'b'].map((name) => [name, new HostNetwork({ name, runDir, runId })]))
    : {};
const workers = ['a', 'b'].map(
  (name) =>
    new CommandWorker({
      network: networks[name],
      name,
      dist,
      runDir,
      runId,
      server,
      hostIdFlag,
      lostAfterMs: lostAfterFlag ? LOST_AFTER_MS : undefined,
      workDir,
    }),
);
const agent = new AgentLink({ dist, runDir, runId, server, noticesFile, noticeWindowMs: 30 * 60_000 });
const chaos = new ChaosRun({
  options,
  rng: seededRandom(options.seed),
  server,
  workers,
  agent,
  markerFile,
  sessionId,
  log,
});

// Interrupted (Ctrl-C, a CI timeout): take down what we started, by pid, and keep the run dir.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: killing the run's processes; run dir kept: ${runDir}`);
    const holders = Object.values(networks).flatMap((network) => [network.slirp, network.holder]);
    for (const proc of [agent.proc, ...workers.map((worker) => worker.proc), server.proc, ...holders])
      if (proc && !proc.hasExited()) process.kill(proc.pid, 'SIGKILL');
    process.exit(130);
  });
}

let exitCode = 1;
try {
  await server.start();
  await Promise.all(Object.values(networks).map((network) => network.start()));
  await Promise.all([...workers.map((worker) => worker.start()), agent.start()]);
  log(`server ${server.address}, workers a and b, agent host up`);
  await chaos.run();
  exitCode = await judge();
} catch (err) {
  log(`the run itself failed: ${err.stack ?? err}`);
  await shutdown();
} finally {
  if (!options.keep && exitCode === 0) rmSync(runDir, { recursive: true, force: true });
  else log(`kept ${runDir} (server, worker and agent host logs, marker, notices)`);
}
process.exit(exitCode);

/** Everything after the rounds: notices, checks, shutdown, leftovers, the table. */
async function judge() {
  const expectNotice = chaos.tasks.filter((task) => task.taskId && expectsNotice(task));
  log(`waiting for ${expectNotice.length} completion notices`);
  await waitUntil(
    () => {
      const notices = noticesById(noticesFile);
      return expectNotice.every((task) => notices.has(`${task.taskId}-notice`));
    },
    NOTICE_WAIT_MS,
    1_000,
  );

  const markers = markerCounts(markerFile);
  const notices = noticesById(noticesFile);
  const defects = [];
  let bytesChecked = 0;
  let viaLogs = 0;
  let noticeRepeats = 0;
  let monitorNotices = 0;
  for (const task of chaos.tasks) {
    const needsLogs = task.taskId && (task.lostReads > 0 || task.errorReads.length > 0);
    const logsText = needsLogs ? await logsOf(dist, server.address, sessionId, task.taskId) : undefined;
    if (needsLogs && logsText === undefined) log(`logs ${task.taskId} gave no complete answer`);
    const result = checkTask(task, { markers, notices, sessionId, logsText });
    defects.push(...result.defects);
    bytesChecked += result.bytesChecked;
    if (result.via === 'logs') viaLogs++;
    noticeRepeats += result.noticeRepeats ?? 0;
    monitorNotices += result.monitorNotices ?? 0;
  }
  let foregroundLost = 0;
  const foregroundErrors = [];
  let foregroundNeverStarted = 0;
  for (const run of chaos.foreground) {
    const unanswered = run.answer?.lost === true && !markers.has(run.token);
    const neverStarted = unanswered && !(await startedOnServer(run.token));
    const result = checkForeground(run, { markers, neverStarted });
    defects.push(...result.defects);
    bytesChecked += result.bytesChecked;
    if (result.lostAnswer) foregroundLost++;
    if (result.neverStarted) foregroundNeverStarted++;
    if (result.errorAnswer) foregroundErrors.push(`${run.token}: ${result.errorAnswer}`);
  }
  // A notice for a task we never started, or from a monitor of a task that had none, would be a
  // notice too many.
  const known = new Set(chaos.tasks.map((task) => `${task.taskId}-notice`));
  for (const task of chaos.tasks.filter((each) => each.notifyOn && each.taskId))
    for (const notice of monitorNoticesOf(task.taskId, notices)) known.add(notice.noticeId);
  for (const id of notices.keys())
    if (!known.has(id))
      defects.push({ kind: DUPLICATED, subject: id, expected: 'no notice', came: 'a notice' });

  const open = await openWorkflows();
  defects.push(...open.defects);
  await shutdown();
  const leftovers = await leftoverProcesses();
  defects.push(...leftovers);
  for (const failure of chaos.eventFailures ?? [])
    defects.push({ kind: OTHER, subject: 'harness', expected: 'chaos event done', came: failure });

  const visibility = visibilityAcrossRestarts(chaos);
  const count = (kind) => defects.filter((defect) => defect.kind === kind).length;
  const killed = chaos.tasks.filter((task) => task.kill).length;
  process.stdout.write(
    `\n${table([
      ['seed', options.seed],
      ['background tasks', chaos.tasks.length],
      ['  of them killed with bash_kill', killed],
      ['  checked via logs (read answers lost)', viaLogs],
      ['  start retried after an error answer', chaos.tasks.filter((task) => task.startErrors).length],
      ['foreground runs', chaos.foreground.length],
      ['  answers lost with the agent host', foregroundLost],
      ['    of them never started (host died first)', foregroundNeverStarted],
      ['  answered an error (server down)', foregroundErrors.length],
      ['worker restarts (SIGKILL)', chaos.restarts.worker],
      ['agent host restarts (SIGKILL)', chaos.restarts.agentHost],
      ['server restarts (SIGKILL)', chaos.restarts.server],
      ['worker host partitions (cut off from the server)', chaos.restarts.partition],
      ['unplanned exits (restarted)', chaos.unplannedExits.length],
      ['agent host kills with reads in flight', chaos.unquiescedAgentKills],
      ['bash_output reads', chaos.tasks.reduce((sum, task) => sum + task.reads, 0)],
      ['  unclaimed (no worker took them)', chaos.tasks.reduce((sum, task) => sum + task.unclaimedReads, 0)],
      ['  answered with an error', chaos.tasks.reduce((sum, task) => sum + task.errorReads.length, 0)],
      ['monitor notices (every third task matches every fifth line)', monitorNotices],
      ['notice repeats dropped by noticeId', noticeRepeats],
      ['bytes checked', bytesChecked],
      ['tasks resumed after a worker restart', visibility.resumed],
      ['tasks not resumed after a worker restart', visibility.notResumed],
      ['longest output gap across a restart', seconds(visibility.maxGapMs)],
      ['worker restart to first new output (max)', seconds(visibility.maxRestartToOutputMs)],
      ['worker restart to first new output (median)', seconds(visibility.medianRestartToOutputMs)],
      ['open bashTask/notice workflows', open.running],
      ['open reader workflows (end when idle)', open.readers],
      ['leftover processes', leftovers.length],
      ['defects: lost', count(LOST)],
      ['defects: duplicated', count(DUPLICATED)],
      ['defects: wrong status', count(WRONG_STATUS)],
      ['defects: other', count(OTHER)],
    ])}\n`,
  );
  for (const error of foregroundErrors) log(`note: foreground ${error}`);
  for (const exit of chaos.unplannedExits)
    log(`note: ${exit.name} exited on its own: ${exit.stderr.split('\n').filter(Boolean).at(-1) ?? ''}`);
  if (defects.length > 0) {
    process.stdout.write(`\n${defects.length} defects:\n`);
    for (const defect of defects)
      process.stdout.write(
        `  [${defect.kind}] ${defect.subject}: expected ${defect.expected}; came ${defect.came}\n`,
      );
  }
  log(defects.length === 0 ? 'no defects' : `${defects.length} defects`);
  return defects.length === 0 ? 0 : 1;
}

/**
 * Open workflows on the run's server. Tasks and notices must all be closed. A task's reader
 * workflow (`<id>-output`) stays open by design for 30 idle minutes after its task ended, holding
 * the read position; those are counted, not defects.
 */
async function openWorkflows() {
  try {
    const text = await server.cli(['workflow', 'list', '--query', 'ExecutionStatus="Running"', '-o', 'json']);
    const rows = text.trim() === '' ? [] : JSON.parse(text);
    const list = Array.isArray(rows) ? rows : [rows];
    const type = (row) => row.type?.name ?? row.workflowType?.name ?? '?';
    const id = (row) => row.execution?.workflowId ?? row.workflowId ?? '?';
    const readers = list.filter((row) => id(row).endsWith('-output'));
    const others = list.filter((row) => !id(row).endsWith('-output'));
    return {
      readers: readers.length,
      running: others.length,
      defects: others.map((row) => ({
        kind: OTHER,
        subject: id(row),
        expected: 'closed',
        came: `${type(row)} still running`,
      })),
    };
  } catch (err) {
    return {
      readers: '?',
      running: '?',
      defects: [
        { kind: OTHER, subject: 'workflow list', expected: 'an answer', came: err.message.split('\n')[0] },
      ],
    };
  }
}

/**
 * Whether any task workflow on the run's server was started for a foreground run's token (its
 * memo holds the command, which echoes the token). Asked only of a run whose answer died with the
 * agent host and whose command never ran, so a "no" is exact, not a guess from timing: the start
 * never left the agent host.
 */
async function startedOnServer(token) {
  const text = await server.cli(['workflow', 'list', '--query', 'WorkflowType="bashTask"', '-o', 'json']);
  return text.includes(`echo ${token} >>`);
}

async function shutdown() {
  chaos.stopped = true;
  await agent.stop();
  await Promise.all(workers.map((worker) => stopGracefully(worker.proc)));
  await Promise.all(Object.values(networks).map((network) => network.stop()));
  await stopGracefully(server.proc);
  await endSessionNetworks(dist, process.env.DURABLE_BASH_RUN_DIR);
}

/** Processes of the run still alive after everything was stopped (given a few seconds to go). */
async function leftoverProcesses() {
  let found = [];
  await waitUntil(
    () => {
      found = processesOfRun(runId, runDir);
      return found.length === 0;
    },
    10_000,
    500,
  );
  return found.map((proc) => ({
    kind: OTHER,
    subject: `pid ${proc.pid} (${proc.name})`,
    expected: 'no process left behind',
    came: proc.args.slice(0, 200),
  }));
}
/** Ends every session network the run's workers made (they outlive a worker by design). */
async function endSessionNetworks(distDir, sessionsRunDir) {
  const { endSessionNetworksUnder } = await import(
    pathToFileURL(path.join(distDir, 'command-host/containment/session-isolation.js')).href
  );
  endSessionNetworksUnder(sessionsRunDir);
}
