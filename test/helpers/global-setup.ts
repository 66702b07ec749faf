/** The run's global set-up: the workflows bundled once; the sessions' networks ended after the run. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { endSessionNetworksUnder } from '../../src/command-host/containment/session-isolation.js';
import { bundleWorkflows } from '../../src/worker/workflow-bundle.js';
import { ensureRunDir } from './run-dir.js';

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
    /** The AI SDK major `ai` resolves to: 6 (`ai-v6`, vitest.config.ts) or 7 (vitest.frameworks.config.ts). */
    aiSdkMajor: number;
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
