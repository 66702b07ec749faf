import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the built package', () => {
  it("imports durable-bash/ai-sdk in plain Node, through package.json's exports", () => {
    const script = `
      import { createAiSdkTools, isBashToolError } from 'durable-bash/ai-sdk';
      console.log([typeof createAiSdkTools, typeof isBashToolError].join(' '));`;
    const out = execFileSync('node', ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('function function\n');
  });
});
