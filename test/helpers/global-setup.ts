import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { SessionNetworks } from '../../src/activities/session-networks.js';
import { bundleWorkflows } from '../../src/worker/workflow-bundle.js';
import { ensureRunDir } from './run-dir.js';

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
  }
}

/**
 * Bundles the workflows once for the whole run; every test worker loads the same bundle. When the
 * run ends, so do the sessions' networks its workers made (run-dir.ts).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bundle-'));
  const file = path.join(dir, 'workflows.js');
  writeFileSync(file, (await bundleWorkflows(new DefaultLogger('WARN'))).code);
  project.provide('workflowBundlePath', file);
  const runDir = ensureRunDir();
  return () => {
    endSessionNetworksUnder(runDir);
    rmSync(runDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Ends every session network under a run directory (`<run dir>/<spill dir hash>/net`). */
function endSessionNetworksUnder(runDir: string): void {
  for (const spill of readdirSync(runDir)) {
    const networks = new SessionNetworks({ dir: path.join(runDir, spill, 'net') });
    for (const session of networks.sessions()) networks.release(session);
  }
}
