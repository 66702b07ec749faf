// `npm run bench [-- options]`: the benchmark of DESIGN.md §4 (bench/budgets.bench.ts, under
// vitest, once per server), then BENCHMARKS.md, the results JSON, --compare, and the gate.
//
//   --quick              small N and sample counts, the in-memory dev server only, short windows;
//                        exits non-zero only on a gross regression against bench/baseline.json
//                        (a quick run: a figure more than 2x its number there plus its slack)
//   --server KIND        memory | file | cluster | all (repeatable, or comma separated);
//                        default: memory and file (quick: memory). cluster needs test/cluster/cluster-env.ts
//   --json FILE          also write the results there
//   --compare OLD.json   print the change per figure against an earlier results file
//   --to NEW.json        with --compare: compare two files, run nothing
//   --write-baseline     write bench/baseline.json from this run
//   --isolation MODE     the workers' --isolation: auto (the default), none, session
//   --soak [--minutes N] the soak (bench/soak.bench.ts; 10 minutes) instead of the budgets
//   --only sandboxes     only bench/sandboxes.bench.ts (the framework sandboxes against the bash
//                        tool, under Node.js 24); a full one replaces that table in
//                        bench/results/latest.json and BENCHMARKS.md, dated on its own
//   --only notices       only bench/notices.bench.ts (what notices cost in the server's actions,
//                        against Temporal's floors), its table replaced the same way
//   --only actions       only bench/actions.bench.ts (what each operation costs in the server's
//                        actions, against Temporal's floors), its table replaced the same way
//
// A full run writes BENCHMARKS.md and bench/results/latest.json; a quick run writes neither (only
// --json, and a copy in the temp directory), so running it leaves the tree as it was.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareLines, machine, markdown, regressions, software } from './lib/report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KINDS = ['memory', 'file', 'cluster'];
const LATEST = path.join(root, 'bench/results/latest.json');
const SOAK = path.join(root, 'bench/results/soak.json');
const BASELINE = path.join(root, 'bench/baseline.json');
// Where the quick run leaves its JSON for the reader: the machine's temporary directory, not the run's.
const systemTmp = os.tmpdir();
// The sessions' networks of every worker the benchmarks start (with sessions kept apart, the
// default), in one directory of this run's, ended when it ends: they outlive a worker by design.
// TMPDIR points into it too, as for the tests (test/helpers/run-dir.ts, whose modes these are), so
// the spill directories, workspaces and servers' files the benchmarks make go with it.
const sessionsRunDir = mkdtempSync(path.join(systemTmp, 'durable-bash-bench-run-'));
chmodSync(sessionsRunDir, 0o711);
mkdirSync(path.join(sessionsRunDir, 'tmp'));
chmodSync(path.join(sessionsRunDir, 'tmp'), 0o1777);
process.env.DURABLE_BASH_RUN_DIR = sessionsRunDir;
process.env.TMPDIR = path.join(sessionsRunDir, 'tmp');
process.on('exit', () => endSessionNetworks(sessionsRunDir));

/** Ends every session network under the run directory (in a child: this process is exiting). */
function endSessionNetworks(dir) {
  const release = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { endSessionNetworksUnder } from ${JSON.stringify(path.join(root, 'dist/command-host/containment/session-isolation.js'))};
       endSessionNetworksUnder(${JSON.stringify(dir)});`,
    ],
    { stdio: 'inherit' },
  );
  if (release.status === 0) rmSync(dir, { recursive: true, force: true });
}

function parse(argv) {
  const options = { quick: false, soak: false, servers: [], writeBaseline: false, isolation: 'auto' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) fail(`${arg} needs a value`);
      return next;
    };
    if (arg === '--quick') options.quick = true;
    else if (arg === '--soak') options.soak = true;
    else if (arg === '--minutes') options.minutes = Number(value());
    else if (arg === '--server') options.servers.push(...value().split(','));
    else if (arg === '--json') options.json = path.resolve(value());
    else if (arg === '--compare') options.compare = path.resolve(value());
    else if (arg === '--to') options.to = path.resolve(value());
    else if (arg === '--write-baseline') options.writeBaseline = true;
    else if (arg === '--isolation') options.isolation = value();
    else if (arg === '--only') options.only = value();
    else if (arg === '--help' || arg === '-h') {
      const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
      process.stdout.write(`${text.split('\nimport ')[0].replaceAll(/^\/\/ ?/gm, '')}\n`);
      process.exit(0);
    } else fail(`unknown option ${arg} (see --help)`);
  }
  if (options.servers.includes('all')) options.servers = KINDS;
  for (const kind of options.servers)
    if (!KINDS.includes(kind)) fail(`--server ${kind}: one of ${KINDS.join(', ')}, all`);
  if (options.servers.length === 0)
    options.servers = options.quick || options.soak ? ['memory'] : ['memory', 'file'];
  if (!['auto', 'none', 'session'].includes(options.isolation ?? 'auto'))
    fail(`--isolation ${options.isolation}: one of auto, none, session`);
  if (options.minutes !== undefined && !(options.minutes > 0)) fail('--minutes needs a positive number');
  if (options.only !== undefined && !['sandboxes', 'notices', 'actions'].includes(options.only))
    fail(`--only ${options.only}: one of sandboxes, notices, actions`);
  return options;
}

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const log = (message) => process.stdout.write(`[bench] ${message}\n`);

/**
 * One vitest run of `file` with the bench's options in the environment, under `node` (this one's
 * unless named); its JSON, and whether it passed.
 */
function vitest(file, env, out, node = process.execPath) {
  const result = spawnSync(
    node,
    [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'vitest.bench.config.ts', file],
    {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, ...env, BENCH_OUT: out, PATH: `${path.dirname(node)}:${process.env.PATH}` },
    },
  );
  const passed = result.status === 0;
  const json = existsSync(out) ? readJson(out) : undefined;
  return { passed, json };
}

/** bench/isolation-cost.mjs's figures, or why there are none (it needs root). */
function isolationCost() {
  if (process.getuid?.() !== 0) return { skipped: 'needs root (bubblewrap with a uid per session)' };
  const ran = spawnSync(process.execPath, [path.join(root, 'bench/isolation-cost.mjs')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (ran.status !== 0) return { skipped: `bench/isolation-cost.mjs failed (exit ${ran.status})` };
  return JSON.parse(ran.stdout);
}

/** bench/terminal-render.mjs's figures, or why there are none. */
function terminalRender() {
  const ran = spawnSync(process.execPath, [path.join(root, 'bench/terminal-render.mjs')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (ran.status !== 0) return { skipped: `bench/terminal-render.mjs failed (exit ${ran.status})` };
  return JSON.parse(ran.stdout);
}

function write(file, text) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  // A JSON file in the tree is linted (biome check .): written in the project's format.
  if (file.endsWith('.json') && !path.relative(root, file).startsWith('..'))
    spawnSync(path.join(root, 'node_modules/.bin/biome'), ['format', '--write', file], {
      cwd: root,
      stdio: 'ignore',
    });
}

/**
 * bench/sandboxes.bench.ts on the `kind` server, under the Node.js 24 `npm run provision` installs
 * (the framework sandboxes need Node.js 22+); its run joins the results. False when it failed.
 */
function runSandboxes(kind) {
  const node24 = path.join(root, '.node24/bin/node');
  log(
    `the framework sandboxes against the bash tool on the ${kind} server (bench/sandboxes.bench.ts, Node.js 24)`,
  );
  if (!existsSync(node24))
    spawnSync('bash', [path.join(root, 'scripts/provision-node.sh')], { stdio: 'inherit' });
  const out = path.join(scratch, 'sandboxes.json');
  const { passed, json } = vitest(
    'bench/sandboxes.bench.ts',
    { BENCH_MODE: results.mode, BENCH_SERVER: kind },
    out,
    node24,
  );
  if (!passed) log('the sandboxes run failed');
  if (json)
    results.runs.push({
      kind: 'sandboxes',
      ...json,
      date: results.date,
      commit: results.software.commit,
      failed: !passed,
    });
  return passed && json !== undefined;
}

/**
 * A bench file that counts the server's actions against Temporal's own floors, on the `kind`
 * server; its run joins the results. `name`: `notices` (what notices cost; a figure short of its
 * target fails the run) or `actions` (what each operation costs; a figure short of issue 31's
 * targets is reported, and the quick bench's exact gate catches an action added to what was
 * measured before). False when it failed.
 */
function runCounted(name, kind) {
  log(
    `what ${name === 'notices' ? 'notices cost' : 'each operation costs'} the server, in actions (bench/${name}.bench.ts) on the ${kind} server`,
  );
  const out = path.join(scratch, `${name}.json`);
  const { passed, json } = vitest(
    `bench/${name}.bench.ts`,
    { BENCH_MODE: results.mode, BENCH_SERVER: kind },
    out,
  );
  if (!passed) log(`the ${name} run failed`);
  if (json)
    results.runs.push({
      kind: name,
      ...json,
      date: results.date,
      commit: results.software.commit,
      failed: !passed,
    });
  if (!passed || json === undefined) return false;
  return name !== 'notices' || json.figures.every((figure) => figure.holds !== false);
}

const options = parse(process.argv.slice(2));
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

if (options.compare && options.to) {
  process.stdout.write(`${compareLines(readJson(options.compare), readJson(options.to)).join('\n')}\n`);
  process.exit(0);
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bench-run-'));
const started = Date.now();
// The workers' isolation (`durable-bash worker --isolation`), passed to them through the environment.
process.env.BENCH_ISOLATION = options.isolation;
const results = {
  date: new Date().toISOString(),
  command,
  mode: options.soak ? 'soak' : options.quick ? 'quick' : 'full',
  machine: machine(),
  software: software(root),
  isolation: options.isolation,
  runs: [],
};
let failed = false;

if (options.only !== undefined) {
  failed =
    options.only === 'sandboxes'
      ? !runSandboxes(options.servers[0])
      : !runCounted(options.only, options.servers[0]);
  if (options.json) write(options.json, `${JSON.stringify(results, null, 2)}\n`);
  if (!options.quick && existsSync(LATEST)) {
    // The rest of the latest full run stays as it was; this table replaces its own.
    const latest = readJson(LATEST);
    latest.runs = [...latest.runs.filter((run) => run.kind !== options.only), ...results.runs];
    write(LATEST, `${JSON.stringify(latest, null, 2)}\n`);
    write(path.join(root, 'BENCHMARKS.md'), markdown(latest, existsSync(SOAK) ? readJson(SOAK) : undefined));
    log('wrote its table into BENCHMARKS.md and bench/results/latest.json');
  }
  process.stdout.write(
    `\n${markdown(results, undefined)
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .join('\n')}\n`,
  );
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s${failed ? '; FAILED' : ''}`);
  process.exit(failed ? 1 : 0);
} else if (options.soak) {
  const kind = options.servers[0];
  const minutes = options.minutes ?? 10;
  log(`soak: ${minutes} minutes of start / read / kill cycles on the ${kind} server`);
  const out = path.join(scratch, 'soak.json');
  const { passed, json } = vitest(
    'bench/soak.bench.ts',
    { BENCH_MODE: 'soak', BENCH_SERVER: kind, BENCH_SOAK_MS: String(minutes * 60_000) },
    out,
  );
  if (json) results.runs.push({ kind, ...json, failed: !passed });
  failed = !passed || !json || json.figures.some((figure) => figure.holds === false);
} else {
  for (const kind of options.servers) {
    log(`${results.mode} run on the ${kind} server`);
    const out = path.join(scratch, `${kind}.json`);
    const { passed, json } = vitest(
      'bench/budgets.bench.ts',
      { BENCH_MODE: results.mode, BENCH_SERVER: kind },
      out,
    );
    if (!passed) {
      failed = true;
      log(`the ${kind} run failed${json ? '; keeping what it measured' : ' before it measured anything'}`);
    }
    if (json) results.runs.push({ kind, ...json, failed: !passed });
  }
  failed = !runSandboxes(options.servers[0]) || failed;
  failed = !runCounted('notices', options.servers[0]) || failed;
  failed = !runCounted('actions', options.servers[0]) || failed;
  if (!options.quick) {
    log('a task read thousands of times (bench/many-reads.bench.ts)');
    const { passed } = vitest('bench/many-reads.bench.ts', {}, path.join(scratch, 'many-reads.json'));
    results.manyReads = passed
      ? 'bench/many-reads.bench.ts: 2,500 reads of one task stay exact, its reader continuing as new: passed'
      : 'bench/many-reads.bench.ts: FAILED';
    failed ||= !passed;
    log('what keeping sessions apart costs a task (bench/isolation-cost.mjs)');
    results.isolationCost = isolationCost();
    log("what a terminal task's screen costs its host (bench/terminal-render.mjs)");
    results.terminalRender = terminalRender();
  }
}
results.durationMs = Date.now() - started;
rmSync(scratch, { recursive: true, force: true });

const text = `${JSON.stringify(results, null, 2)}\n`;
if (options.json) write(options.json, text);
if (options.soak) {
  if (!options.minutes || options.minutes >= 10) write(SOAK, text);
} else if (options.quick) {
  write(path.join(systemTmp, 'durable-bash-bench-quick.json'), text);
} else {
  write(LATEST, text);
}
if (!options.quick && !options.soak) {
  write(path.join(root, 'BENCHMARKS.md'), markdown(results, existsSync(SOAK) ? readJson(SOAK) : undefined));
  log('wrote BENCHMARKS.md and bench/results/latest.json');
} else if (options.soak && existsSync(LATEST) && existsSync(SOAK)) {
  write(path.join(root, 'BENCHMARKS.md'), markdown(readJson(LATEST), readJson(SOAK)));
}

// What the run measured, as it will read in BENCHMARKS.md.
process.stdout.write(
  `\n${markdown(results, undefined)
    .split('\n')
    .filter((line) => line.startsWith('|') || line.startsWith('## ') || line.startsWith('- note'))
    .join('\n')}\n\n`,
);

if (options.compare)
  process.stdout.write(`${compareLines(readJson(options.compare), results).join('\n')}\n\n`);

if (options.writeBaseline) {
  write(BASELINE, text);
  log(`wrote ${path.relative(root, BASELINE)} from this ${results.mode} run`);
} else if (!options.soak) {
  const baseline = existsSync(BASELINE) ? readJson(BASELINE) : undefined;
  if (baseline && baseline.mode !== results.mode) {
    // N, sample counts and windows differ between modes: their figures do not compare.
    log(
      `${path.relative(root, BASELINE)} is a ${baseline.mode} run: a ${results.mode} run is not gated (see --compare)`,
    );
  } else if (baseline) {
    const { gated, found } = regressions(baseline, results);
    if (found.length > 0) {
      failed = true;
      log(
        `gross regressions against ${path.relative(root, BASELINE)} (${baseline.mode} run of ${baseline.date}):`,
      );
      for (const line of found) log(`  ${line}`);
    } else
      log(
        `no gross regression against ${path.relative(root, BASELINE)} (${baseline.mode} run of ${baseline.date}; ${gated} figures gated)`,
      );
  } else log(`no ${path.relative(root, BASELINE)}: nothing to gate on (write one with --write-baseline)`);
}
log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s${failed ? '; FAILED' : ''}`);
process.exit(failed ? 1 : 0);
