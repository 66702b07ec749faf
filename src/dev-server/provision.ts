/**
 * What `durable-bash dev` needs from its machine, provisioned when it is missing by the package's
 * own scripts, the ones `npm test` runs too (`npm run provision`): the Temporal CLI, and bubblewrap
 * and slirp4netns, on which the worker keeps sessions apart.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import { executablePath } from '../command-host/supervisor/executable-path.js';
import { findTemporalBinary, packageRoot, provisionScript, TemporalBinary } from './binaries.js';

/** The script that installs bubblewrap and slirp4netns (apt-get, as root). */
export const sandboxProvisionScript = path.join(packageRoot, 'scripts', 'provision-sandbox.sh');

/**
 * Provisions what is missing, and returns the Temporal CLI's path. Without bubblewrap or
 * slirp4netns that the script cannot install (no root, no apt-get), its one line says what to run,
 * and `dev` goes on: it says in one line why sessions are not kept apart (dev.ts), and the worker's
 * start line what that leaves open.
 */
export function provisionDev(executor: ExecutorOptions, log: (line: string) => void): string {
  if (executor.isolation !== 'none' || executor.sandbox === 'bwrap') {
    // Found as the worker finds them (src/command-host/containment/session-isolation.ts, session-networks.ts).
    const missing = [process.env.DURABLE_BASH_BWRAP ?? 'bwrap', 'slirp4netns'].filter(
      (name) => executablePath(name) === undefined,
    );
    if (missing.length > 0) {
      log(`no ${missing.join(' or ')} to keep sessions apart; provisioning with ${sandboxProvisionScript}`);
      spawnSync('bash', [sandboxProvisionScript], { stdio: 'inherit' });
    }
  }
  return ensureTemporalCli(log);
}

/** The Temporal CLI, provisioned first (by the project's script) if no binary is found. */
function ensureTemporalCli(log: (line: string) => void): string {
  let found = findTemporalBinary(TemporalBinary.cli);
  if (found.kind === 'download') {
    log(`no Temporal CLI found; provisioning with ${provisionScript}`);
    const result = spawnSync('bash', [provisionScript], { stdio: 'inherit' });
    if (result.status !== 0)
      throw new Error(`provisioning failed (exit ${result.status}); run: bash ${provisionScript}`);
    found = findTemporalBinary(TemporalBinary.cli);
  }
  if (found.kind === 'download')
    throw new Error(`no Temporal CLI after provisioning; run: bash ${provisionScript}`);
  return found.path;
}
