/**
 * The test run's own directory for sessions' networks (DURABLE_BASH_RUN_DIR, see
 * src/command-host/containment/session-isolation.ts): set when a vitest config loads, before any test process
 * starts, so every worker a test starts (in-process or not) inherits it; the global teardown
 * (global-setup.ts) ends every network in it. Networks outlive a worker by design; a test run
 * leaves nothing running.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function ensureRunDir(): string {
  process.env.DURABLE_BASH_RUN_DIR ||= mkdtempSync(path.join(os.tmpdir(), 'durable-bash-run-'));
  return process.env.DURABLE_BASH_RUN_DIR;
}
