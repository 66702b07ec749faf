// `npm run ui:screenshot [-- OUT.png]`: a task's page in the Temporal Web UI, as a PNG taken by
// headless Chromium (scripts/install-chromium.sh installs it from Debian). Starts `durable-bash dev`
// on free ports with a scratch database, runs one background task through the CLI, waits for its
// end, opens the task's page and writes the screenshot (default: bench/results/ui-task.png), then
// stops dev. What the page should show: docs/OPERATIONS.md, "The Web UI".
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(root, 'bench/results/ui-task.png'));
const BIN = path.join(root, 'dist/cli/main.js');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-ui-'));

execFileSync('bash', [path.join(root, 'scripts/install-chromium.sh')], { stdio: 'inherit' });

const dev = spawn(
  process.execPath,
  [
    BIN,
    'dev',
    '--port',
    '0',
    '--db',
    path.join(scratch, 'temporal.db'),
    '--spill-dir',
    path.join(scratch, 'spill'),
  ],
  { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
);
let banner = '';
dev.stdout.on('data', (chunk) => {
  banner += chunk;
});
dev.stderr.on('data', (chunk) => {
  banner += chunk;
});
try {
  const { address, ui } = await devAddresses();
  const cli = (command, ...args) =>
    execFileSync(process.execPath, [BIN, command, '--address', address, ...args], { encoding: 'utf8' });
  const started = cli(
    'run',
    '--background',
    '--owner',
    'ui-demo',
    '--',
    'for i in 1 2 3; do echo "line $i"; sleep 0.3; done',
  );
  const taskId = /bash-[0-9a-f-]{36}/.exec(started)?.[0];
  if (!taskId) throw new Error(`no task id in: ${started}`);
  cli('logs', '--owner', 'ui-demo', '--follow', taskId);
  const url = `${ui}/namespaces/default/workflows/${taskId}`;
  execFileSync(
    'chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--hide-scrollbars',
      '--window-size=1400,1100',
      '--virtual-time-budget=20000',
      `--screenshot=${out}`,
      url,
    ],
    { stdio: 'ignore' },
  );
  console.log(`${out} (${statSync(out).size} bytes): ${url}`);
  // The run's history page as text: the summary is the task's description, the payloads read as
  // JSON text (no base64).
  const { runId } = JSON.parse(
    execFileSync(
      path.join(root, '.temporal/bin/temporal'),
      ['workflow', 'describe', '-w', taskId, '--address', address, '-o', 'json'],
      { encoding: 'utf8' },
    ),
  ).workflowExecutionInfo.execution;
  const text = execFileSync(
    'chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--virtual-time-budget=20000',
      '--dump-dom',
      `${url}/${runId}/history`,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  )
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ');
  for (const expected of ['Summary Run a command from the durable-bash CLI', 'line 1']) {
    if (!text.includes(expected))
      throw new Error(`the task's page does not show ${JSON.stringify(expected)}`);
  }
  console.log('the page shows the summary and the output as text');
} finally {
  process.kill(-dev.pid, 'SIGINT');
  await new Promise((resolve) => dev.once('exit', resolve));
  rmSync(scratch, { recursive: true, force: true });
}

/** The gRPC and UI addresses `dev` prints once it serves. */
async function devAddresses() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const address = /Temporal gRPC:\s+(\S+)/.exec(banner)?.[1];
    const ui = /Temporal UI:\s+(\S+)/.exec(banner)?.[1];
    if (address && ui) return { address, ui };
    if (dev.exitCode !== null) throw new Error(`dev exited: ${banner}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`dev did not start: ${banner}`);
}
