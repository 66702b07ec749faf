/** Completion notices into the harness's agents: `AgentSessions` over `ctx.agents`. */
import type { AgentRegistry } from '@deepseek-ai/dsh-agent';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import type { AgentSessions } from '../shared/notice.js';

export interface HarnessSessionsOptions {
  /** Wake an idle agent with `followup` instead of `inject`. @default false */
  followup?: boolean;
}

/**
 * The harness's sessions as the agent worker sees them. A notice becomes a user message with
 * source `{ kind: 'plugin', plugin: 'tool-bash' }` in the owning agent's inbox; a session the
 * registry no longer holds is gone. (The agent host drops a repeated `noticeId` before it comes here.)
 */
export function createHarnessSessions(
  agents: () => AgentRegistry,
  options: HarnessSessionsOptions = {},
): AgentSessions {
  return {
    async inject(sessionId, content, { source }) {
      const agent = agents().get(sessionId as Parameters<AgentRegistry['get']>[0]);
      if (agent === undefined) return false;
      const message = createUserMessage({
        content: [{ type: 'text', text: content }],
        source: { kind: source.kind, plugin: source.plugin },
      });
      if (options.followup === true && agent.status === 'idle') agent.followup(message);
      else agent.inject(message);
      return true;
    },
  };
}
