import { describe, expect, it } from 'vitest';
import { requireNode } from '../../src/shared/node-version.js';

describe('requireNode', () => {
  it('passes a Node.js of the major asked for, or later', () => {
    expect(() => requireNode('durable-bash/openai-agents', 22, '22.0.0')).not.toThrow();
    expect(() => requireNode('durable-bash/openai-agents', 22, '24.19.0')).not.toThrow();
  });

  it('throws one line naming the entry point, the Node.js it needs and the one running', () => {
    expect(() => requireNode('durable-bash/openai-agents', 22, '20.20.2')).toThrow(
      new Error(
        'durable-bash/openai-agents needs Node.js 22 or later (this is Node.js 20.20.2); the rest of durable-bash runs on Node.js 20',
      ),
    );
  });

  it('checks the running Node.js when given no version', () => {
    const major = Number.parseInt(process.versions.node, 10);
    expect(() => requireNode('durable-bash/ai-sdk', major)).not.toThrow();
    expect(() => requireNode('durable-bash/ai-sdk', major + 1)).toThrow(
      `durable-bash/ai-sdk needs Node.js ${major + 1} or later (this is Node.js ${process.versions.node})`,
    );
  });
});
