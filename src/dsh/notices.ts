/** Completion notices into the harness's agents: `AgentSessions` over `ctx.agents`. */
import type { AgentRegistry } from '@deepseek-ai/dsh-agent';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import type { AgentSessions } from '../activities/inject-notice.js';

/** How many delivered notice ids are remembered to drop a repeated inject. */
export const REMEMBERED_NOTICE_IDS = 10_000;

export interface HarnessSessionsOptions {
  /** Wake an idle agent with `followup` instead of `inject`. @default false */
  followup?: boolean;
}

/**
 * The harness's sessions as the agent worker sees them. A notice becomes a user message with
 * source `{ kind: 'plugin', plugin: 'tool-bash' }` in the owning agent's inbox; a repeat of a
 * delivered `noticeId` (an inject retried after its answer was lost) is dropped; a session the
 * registry no longer holds is gone.
 */
export function createHarnessSessions(
  agents: () => AgentRegistry,
  options: HarnessSessionsOptions = {},
): AgentSessions {
  const delivered = new Set<string>();
  return {
    async inject(sessionId, content, { source, noticeId }) {
      if (delivered.has(noticeId)) return true;
      const agent = agents().get(sessionId as Parameters<AgentRegistry['get']>[0]);
      if (agent === undefined) return false;
      const message = createUserMessage({
        content: [{ type: 'text', text: content }],
        source: { kind: source.kind, plugin: source.plugin },
      });
      if (options.followup === true && agent.status === 'idle') agent.followup(message);
      else agent.inject(message);
      delivered.add(noticeId);
      if (delivered.size > REMEMBERED_NOTICE_IDS) {
        const oldest = delivered.values().next().value;
        if (oldest !== undefined) delivered.delete(oldest);
      }
      return true;
    },
  };
}
