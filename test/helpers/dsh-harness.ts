/**
 * A DeepSeek harness for the plugin's tests, composed from the harness's own published packages
 * the way its app composes them (Cordis root context; the llm, sessions, agents, systemPrompt and
 * tools services; the concrete agent loop).
 */
import { Context, type Fiber } from '@deepseek-ai/cordis';
import AgentRegistry from '@deepseek-ai/dsh-agent';
import AgentLoop from '@deepseek-ai/dsh-agent-loop';
import LlmRuntime from '@deepseek-ai/dsh-llm';
import SessionStore from '@deepseek-ai/dsh-session';
import SystemPrompt from '@deepseek-ai/dsh-system-prompt';
import ToolRuntime from '@deepseek-ai/dsh-tools';

// The harness targets Node 22 (its agent loop calls `Promise.withResolvers`); these suites run on
// the project's Node 20, so that one standard ES2024 method is installed when it is missing.
if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.assign(Promise, {
    withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

/** The harness's core services, each loaded as its app loads it; each fiber goes into `fibers` (dispose them in reverse). */
export async function createHarness(fibers: Fiber[]): Promise<Context> {
  const root = new Context();
  const services: [unknown, unknown?][] = [
    [LlmRuntime],
    [SessionStore],
    [AgentRegistry],
    [SystemPrompt],
    [ToolRuntime],
    [AgentLoop, { agents: [] }],
  ];
  for (const [service, config] of services) {
    const fiber = root.plugin(service as never, config as never);
    fibers.push(fiber);
    await fiber.await();
  }
  return root;
}
