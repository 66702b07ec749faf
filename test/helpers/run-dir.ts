/**
 * The test run's own directory (DURABLE_BASH_RUN_DIR): set when a vitest config loads, before any
 * test process starts, so every worker a test starts (in-process or not) inherits it; the global
 * teardown (global-setup.ts) ends every network in it, then removes it.
 * - Sessions' networks (see src/command-host/containment/session-isolation.ts) live in it: they
 *   outlive a worker by design; a test run leaves nothing running.
 * - TMPDIR points into it (`<run dir>/tmp`), so what tests and their workers make with
 *   `os.tmpdir()` (workdirs, spill directories, servers' files) goes when the run does, even where
 *   a test stops before its own clean-up.
 */
import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function ensureRunDir(): string {
  if (!process.env.DURABLE_BASH_RUN_DIR) {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-run-'));
    // As /tmp is: a session's uid passes through to its workdir (isolation.test.ts), others' files
    // are theirs (sticky).
    chmodSync(runDir, 0o711);
    const tmp = path.join(runDir, 'tmp');
    mkdirSync(tmp);
    chmodSync(tmp, 0o1777);
    process.env.DURABLE_BASH_RUN_DIR = runDir;
    process.env.TMPDIR = tmp;
  }
  return process.env.DURABLE_BASH_RUN_DIR;
}
