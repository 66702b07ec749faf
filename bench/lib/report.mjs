// The report side of `npm run bench`: the machine, BENCHMARKS.md, --compare, and the quick mode's
// gross-regression gate against bench/baseline.json. Plain JS: bench/run.mjs runs before any build.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const GIB = 1024 ** 3;

/** The machine the numbers came from. */
export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? 'unknown CPU',
    cores: cpus.length,
    ramGiB: Math.round(os.totalmem() / GIB),
    kernel: `${os.type()} ${os.release()}`,
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
  };
}

/** Node, the Temporal CLI and SDK, and the commit the run measured (dirty when the tree had changes). */
export function software(root) {
  const run = (file, args) => {
    try {
      return execFileSync(file, args, {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return undefined;
    }
  };
  const cli = path.join(root, '.temporal/bin/temporal');
  const sdk = JSON.parse(
    readFileSync(path.join(root, 'node_modules/@temporalio/client/package.json'), 'utf8'),
  );
  const commit = run('git', ['rev-parse', '--short', 'HEAD']);
  const dirty = run('git', ['status', '--porcelain', '--untracked-files=no']);
  return {
    node: process.version,
    temporalCli: existsSync(cli) ? (run(cli, ['--version']) ?? 'unknown') : 'not provisioned',
    temporalSdk: sdk.version,
    commit: commit ? `${commit}${dirty ? ' (with uncommitted changes)' : ''}` : 'unknown',
  };
}

const cell = (value) => String(value ?? '').replaceAll('|', '\\|');
const yesNo = (holds) => (holds === null || holds === undefined ? '' : holds ? 'yes' : 'no');

function runTable(run) {
  const lines = [
    `## ${run.server?.description ?? run.kind} (Temporal ${run.server?.version ?? '?'})`,
    '',
    `${run.mode} mode, ${(run.durationMs / 1000).toFixed(0)} s${run.date ? `; measured ${run.date} at ${run.commit}` : ''}${run.failed ? '; **the run failed part-way: figures below are what it measured**' : ''}`,
    '',
    '| measure | raw figures | against the floor | target | holds |',
    '| --- | --- | --- | --- | --- |',
    ...run.figures.map(
      (f) =>
        `| ${cell(f.measure)} | ${cell(f.raw)} | ${cell(f.ratioText)} | ${cell(f.target)} | ${yesNo(f.holds)} |`,
    ),
  ];
  if (run.notes?.length) lines.push('');
  for (const note of run.notes ?? []) lines.push(`- note: ${note}`);
  return lines.join('\n');
}

function soakTable(soak) {
  return [
    '## Soak: start / read / kill cycles',
    '',
    `${soak.command} on ${soak.date}: ${soak.runs[0]?.server?.description ?? ''}; ${(soak.runs[0]?.durationMs / 60_000).toFixed(1)} min`,
    '',
    '| measure | raw figures | target | holds |',
    '| --- | --- | --- | --- |',
    ...(soak.runs[0]?.figures ?? []).map(
      (f) => `| ${cell(f.measure)} | ${cell(f.raw)} | ${cell(f.target)} | ${yesNo(f.holds)} |`,
    ),
    '',
  ].join('\n');
}

export function markdown(results, soak) {
  const m = results.machine;
  const s = results.software;
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.mjs runs bench/budgets.bench.ts once per server, then',
    'bench/sandboxes.bench.ts under Node.js 24, then bench/notices.bench.ts and bench/actions.bench.ts);',
    'one run, but for a table that says it was measured on its own (`npm run bench -- --only',
    'sandboxes`, `--only notices` or `--only actions` replaces that table alone). The notices and',
    "actions tables count the server's own `action` counter (what Temporal Cloud bills), by type,",
    'against a floor of plain Temporal code doing the same work; the quick bench gates each action',
    'count exactly against bench/baseline.json.',
    'Targets: the target column. Every figure is put against floors measured in the same run on the same',
    "server: a direct `spawn('bash', ['-c', 'true'])` (spawn), Temporal's own round trip (a trivial",
    'workflow running one trivial activity on a worker in the bench process: floor), that round trip',
    "paying a run's guarantees (a local activity first, one heartbeat, a search attribute upserted),",
    "and for scale Temporal's own burst (N workflows from 8 callers, each one activity heartbeating",
    'once a minute), and that burst with each activity running the command.',
    'A latency reads `spawn + k x floor` with k = (x - spawn) / floor at the same percentile.',
    "Server cost comes from the server's own Prometheus counters over a window with the tasks standing:",
    'frontend `service_requests` only (a call is counted again by history or matching, not counted',
    'here), long polls left out (they are per worker), and persistence `UpdateWorkflowExecution`.',
    '',
    'Run: `npm run bench` (full: both dev servers, N = 1,000, 500 foreground samples, 120 s cost',
    'windows; about 30 minutes), `npm run bench -- --server cluster` (test/cluster/cluster-env.ts),',
    '`npm run bench -- --quick` (CI: N = 100, 10 s windows, under 3 minutes; fails only on a figure',
    'more than 2x its number in bench/baseline.json, a quick run, plus a slack; a full run is not',
    'gated), `npm run bench -- --compare OLD.json`',
    '(the change per figure), `npm run bench:soak` (10 minutes). Results: bench/results/latest.json.',
    '',
    `- when: ${results.date}`,
    `- command: \`${results.command}\``,
    `- machine: ${m.cores} x ${m.cpu}, ${m.ramGiB} GiB RAM, ${m.kernel}; load average at the start ${m.loadAverage.join(', ')}`,
    `- software: Node ${s.node}, ${s.temporalCli}, @temporalio/* ${s.temporalSdk}, durable-bash ${s.commit}`,
    `- setup: one \`durable-bash worker${results.isolation && results.isolation !== 'auto' ? ` --isolation ${results.isolation}` : ''}\` process per measure group (isolation: ${isolationSaid(results.isolation)}), the tools in the benchmark process`,
    '',
    ...results.runs.map((run) => `${runTable(run)}\n`),
    ...(results.manyReads ? [`## Many reads\n\n${results.manyReads}\n`] : []),
    ...(results.isolationCost ? [isolationCostTable(results.isolationCost)] : []),
    ...(results.terminalRender ? [terminalRenderTable(results.terminalRender)] : []),
    ...(soak ? [soakTable(soak)] : []),
  ].join('\n');
}

/** What keeping sessions apart costs a task, from bench/isolation-cost.mjs. */
function isolationCostTable(cost) {
  if (cost.skipped) return `## What sessions apart cost\n\nNot measured: ${cost.skipped}.\n`;
  const { start, memory } = cost;
  const over = (mode) => `${(start[mode].p50 - start.none.p50).toFixed(1)} ms`;
  return [
    '## What sessions apart cost',
    '',
    `bench/isolation-cost.mjs: the launch chains alone, no worker or server (${cost.samples} runs of \`bash -c true\` each; ${cost.tasks} tasks standing for memory).`,
    '',
    '| measure | none | session (root) | sandbox |',
    '| --- | --- | --- | --- |',
    `| \`bash -c true\` through the chain, p50 / p95 | ${start.none.p50} / ${start.none.p95} ms | ${start.session.p50} / ${start.session.p95} ms (+${over('session')}) | ${start.sandbox.p50} / ${start.sandbox.p95} ms (+${over('sandbox')}) |`,
    `| the worker building a session's launch (\`launch()\`), p50 / p95 | | ${start.launchBuild.p50} / ${start.launchBuild.p95} ms | |`,
    `| processes between supervisor and command, per task | 0 | ${memory.session.processesPerTask} | ${memory.sandbox.processesPerTask} |`,
    `| their PSS, per task | 0 | ${memory.session.perTaskKiB} KiB | ${memory.sandbox.perTaskKiB} KiB |`,
    `| a session's network (slirp4netns), per session | | ${Math.round(memory.networkPerSessionKiB)} KiB | |`,
    `| the holder of a session's network namespace, per session | | ${Math.round(memory.holderPerSessionKiB)} KiB | |`,
    `| a session's relay of allowed ports, per session with ports | | ${Math.round(memory.relayPerSessionKiB)} KiB | |`,
    '',
  ].join('\n');
}

/** What a terminal task's screen costs its host, from bench/terminal-render.mjs. */
export function terminalRenderTable(cost) {
  if (cost.skipped) return `## What a terminal's screen costs\n\nNot measured: ${cost.skipped}.\n`;
  return [
    "## What a terminal's screen costs",
    '',
    `bench/terminal-render.mjs: the host's emulator alone, a ${(cost.logBytes / 1e6).toFixed(1)} MB log at 120x40 (medians of ${cost.samples}).`,
    '',
    '| measure | value |',
    '| --- | --- |',
    `| first render of the whole log (a task's first read) | ${cost.firstRenderMs} ms |`,
    `| 1 KB more, from the checkpoint file (a restarted worker's first read) | ${cost.fromCheckpointMs} ms |`,
    `| 30 bytes more, in memory (each later read) | ${cost.inMemoryMs} ms |`,
    `| the checkpoint file (screen, 1,000 lines of scrollback, modes; saved every 64 KiB of log) | ${Math.round(cost.checkpointBytes / 1024)} KiB |`,
    `| the benchmark process's RSS after it | ${cost.rssMiB} MiB |`,
    '',
  ].join('\n');
}

/** The isolation the run's workers had: the worker's default (`auto`) keeps sessions apart, or it would not start. */
function isolationSaid(mode) {
  if (mode === 'none') return 'none';
  if (mode === 'session') return 'sessions apart';
  return mode === 'auto' ? 'the default, sessions apart (root here)' : 'not recorded';
}

/** Every figure of a results file, keyed `<server>/<id>`. */
function figuresOf(results) {
  const map = new Map();
  for (const run of results.runs ?? []) for (const f of run.figures ?? []) map.set(`${run.kind}/${f.id}`, f);
  return map;
}

const num = (n, digits = 2) =>
  n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits);
const change = (before, after) =>
  Number.isFinite(before) && Number.isFinite(after) && before !== 0
    ? `${after >= before ? '+' : ''}${(((after - before) / Math.abs(before)) * 100).toFixed(0)} %`
    : '';

/** The change per figure from `old` to `now`: value and ratio. */
export function compareLines(old, now) {
  const before = figuresOf(old);
  const lines = [
    `compared with ${old.date ?? '?'} (${old.mode ?? '?'} mode, ${old.software?.commit ?? '?'})`,
    '',
    '| figure | before | now | change | ratio before | ratio now | change |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [key, f] of figuresOf(now)) {
    const b = before.get(key);
    lines.push(
      `| ${key} | ${b ? `${num(b.value, 1)} ${b.unit}` : '-'} | ${num(f.value, 1)} ${f.unit} | ${b ? change(b.value, f.value) : 'new'} | ${b ? num(b.ratio) : '-'} | ${num(f.ratio)} | ${b ? change(b.ratio, f.ratio) : ''} |`,
    );
  }
  for (const key of before.keys())
    if (!figuresOf(now).has(key)) lines.push(`| ${key} | (not measured now) |||||`);
  return lines;
}

/**
 * The gross regressions of `now` against `baseline`: a gated figure more than 2x its recorded
 * number plus its slack, or, for a figure gated exactly (`gateExact`), any rise. Matched by figure id on the same server kind; a figure the baseline lacks
 * is not gated. Answers how many were gated, and what regressed.
 */
export function regressions(baseline, now) {
  const recorded = figuresOf(baseline);
  const found = [];
  let gated = 0;
  for (const [key, f] of figuresOf(now)) {
    const b = recorded.get(key);
    if (!b || f.gateSlack === undefined) continue;
    const pick = (x) => (f.gateOn === 'value' ? x.value : x.ratio);
    const was = pick(b);
    const is = pick(f);
    if (was === null || was === undefined || !Number.isFinite(was)) continue;
    gated++;
    const limit = f.gateExact ? was : 2 * Math.max(was, 0) + f.gateSlack;
    // A figure that could not be had (NaN: a burst or restart that never finished) is a regression.
    if (is === null || is === undefined || !Number.isFinite(is) || is > limit)
      found.push(
        f.gateExact
          ? `${key}: ${f.gateOn === 'value' ? 'value' : 'ratio'} ${num(is)} > ${num(was)}, the baseline's, exactly (${f.raw})`
          : `${key}: ${f.gateOn === 'value' ? 'value' : 'ratio'} ${num(is)} > 2 x ${num(was)} + ${f.gateSlack} = ${num(limit)} (${f.raw})`,
      );
  }
  return { gated, found };
}
