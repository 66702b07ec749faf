import { execFileSync } from 'node:child_process';
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
});
