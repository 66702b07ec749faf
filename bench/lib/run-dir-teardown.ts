/**
 * The global teardown of a bench file run by vitest directly (not through bench/run.mjs, which ends
 * its own run's networks): the sessions' networks its workers made end with the run, as a test
 * run's do (test/helpers/global-setup.ts). Without it each such run left its slirp4netns running.
 */
import { rmSync } from 'node:fs';
import { endSessionNetworksUnder } from '../../src/command-host/containment/session-isolation.js';
import { ensureRunDir } from '../../test/helpers/run-dir.js';

export default function setup(): () => void {
  const runDir = ensureRunDir();
  return () => {
    endSessionNetworksUnder(runDir);
    rmSync(runDir, { recursive: true, force: true });
  };
}
