/**
 * `npm test`: vitest twice. First the suite (vitest.config.ts) under the Node.js running this
 * script, then the framework entry points' tests (vitest.frameworks.config.ts, test/frameworks/)
 * under the provisioned Node.js 24 (scripts/provision-node.sh), which is also first on their PATH.
 *
 * Arguments go to both runs, so the inner loop is `npm test -- <file or filter> [vitest options]`:
 * a run starts only when a filter matches one of its files (`npm test -- test/tools/bash.test.ts`
 * runs the first, `npm test -- node-version` the second, no filter both). A run's `--outputFile`
 * gets `.frameworks` appended for the second, so each run's report survives (.ci/run reads both).
 * Both runs go ahead when the first fails; the exit code is the first failure's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');
const node24Bin = path.join(root, '.node24/bin');
const FRAMEWORKS_DIR = 'test/frameworks/';
const FRAMEWORKS_CONFIG = 'vitest.frameworks.config.ts';

const args = process.argv.slice(2);

/** The words vitest takes as file filters: not an option, nor the value of a `--flag value`. */
const filters = args.filter((arg, i) => {
  const previous = args[i - 1];
  return !arg.startsWith('-') && !(previous?.startsWith('-') && !previous.includes('='));
});

const testFiles = readdirSync(path.join(root, 'test'), { recursive: true })
  .map((file) => path.posix.join('test', String(file).split(path.sep).join('/')))
  .filter((file) => file.endsWith('.test.ts'));
const matches = (files) =>
  filters.length === 0 || files.some((f) => filters.some((filter) => f.includes(filter)));
const inFrameworks = matches(testFiles.filter((f) => f.startsWith(FRAMEWORKS_DIR)));
// With filters that match nothing, the first run still starts, so vitest says so and fails.
const inSuite = matches(testFiles.filter((f) => !f.startsWith(FRAMEWORKS_DIR))) || !inFrameworks;

function run(node, extraArgs, env = process.env) {
  const result = spawnSync(node, [vitest, 'run', ...extraArgs], { cwd: root, stdio: 'inherit', env });
  return result.status ?? 1;
}

let status = 0;
if (inSuite) status = run(process.execPath, args);
if (inFrameworks) {
  const node24 = path.join(node24Bin, 'node');
  if (!existsSync(node24)) {
    console.error(`run-tests: ${node24} is missing; bash scripts/provision-node.sh provides it`);
    process.exit(1);
  }
  // `--outputFile=<path>`, `--outputFile <path>`, and the per-reporter `--outputFile.json=<path>`.
  const frameworkArgs = args.map((arg, i) =>
    (arg.startsWith('--outputFile') && arg.includes('=')) || args[i - 1]?.match(/^--outputFile(\.\w+)?$/)
      ? `${arg}.frameworks`
      : arg,
  );
  const env = { ...process.env, PATH: `${node24Bin}${path.delimiter}${process.env.PATH ?? ''}` };
  const frameworksStatus = run(node24, ['--config', FRAMEWORKS_CONFIG, ...frameworkArgs], env);
  if (status === 0) status = frameworksStatus;
}
process.exit(status);
