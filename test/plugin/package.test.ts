import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

describe('the built package', () => {
  it("imports durable-bash/plugin in plain Node, through package.json's exports", () => {
    const script = `
      import { durableBashPlugin } from 'durable-bash/plugin';
      const plugin = durableBashPlugin();
      console.log([typeof durableBashPlugin, plugin.name, typeof plugin.configureWorker].join(' '));`;
    const out = execFileSync('node', ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('function durable-bash function\n');
  });

  it('bundles durable-bash/workflow into a workflow of the user, with no Node module in it', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../workflow-tools/package-agent.mjs', import.meta.url)),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    expect(code).toContain('workflowBashTools');
    expect(code).not.toMatch(/require\("node:/);
  });
});
