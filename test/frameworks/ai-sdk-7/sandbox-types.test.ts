/**
 * The published types against AI SDK 7's own: the sandbox handles, declared by their shape in
 * src/ai-sdk/sandbox-types.ts (so that AI SDK 6 users compile), stay AI SDK 7's sandbox, and the
 * tools take a typed `toolsContext`. Checked by the compiler (`npm run typecheck`).
 */
import { type Experimental_SandboxProcess, type Experimental_SandboxSession, generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import type { AiSdkTools, DurableBashProcess, DurableBashSandbox } from '../../../src/ai-sdk/index.js';

type Model = Parameters<typeof generateText>[0]['model'];

/** Compiles only when `Actual` is assignable to `Expected`. */
function assignable<Expected>(_actual: Expected): true {
  return true;
}

describe('the AI SDK 7 types of durable-bash/ai-sdk', () => {
  it('are AI SDK 7 sandbox sessions, processes, and tools with a session context', () => {
    // Never called: the compiler checks it.
    const checks = (
      sandbox: DurableBashSandbox,
      child: DurableBashProcess,
      writable: DurableBashProcess & { stdin: WritableStream<Uint8Array> },
      tools: AiSdkTools,
      model: Model,
    ) => [
      assignable<Experimental_SandboxSession>(sandbox),
      assignable<Experimental_SandboxProcess>(child),
      assignable<Experimental_SandboxProcess & { readonly stdin: WritableStream<Uint8Array> }>(writable),
      generateText({ model, prompt: 'x', tools, toolsContext: { bash: { sessionId: 's', cwd: '/w' } } }),
      // @ts-expect-error a session id is a string
      generateText({ model, prompt: 'x', tools, toolsContext: { bash: { sessionId: 1 } } }),
    ];
    expect(typeof checks).toBe('function');
  });
});
