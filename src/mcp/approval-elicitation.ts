/**
 * Asking an MCP client's user about a durable approval request, by elicitation (a form with one
 * choice, allow or deny, and an optional reason). The request itself lives in its workflow: the
 * answer is one decision among others (the CLI, the Web UI), and the first to arrive wins. A
 * dismissed form leaves the request open; a declined one denies it.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalDecision, ApprovalPrompt, ApprovalQuestion } from '../shared/approval.js';
import { shownLine } from '../shared/shown-text.js';

/** The name Claude Code gives itself in the MCP handshake (`clientInfo.name`). */
export const CLAUDE_CODE_CLIENT = 'claude-code';

/** The variable Claude Code sets in the environment of every MCP server it starts: its conversation's id. */
export const CLAUDE_CODE_SESSION_ENV = 'CLAUDE_CODE_SESSION_ID';

/**
 * Who a decision made in the client's form is recorded as made by: `claude-code:<conversation>` for
 * Claude Code (the conversation that started this server, else the server's own session), else
 * `mcp-client:<client name>`.
 */
export function elicitedBy(
  clientName: string | undefined,
  sessionId: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (clientName !== CLAUDE_CODE_CLIENT) return `mcp-client:${clientName ?? 'unnamed'}`;
  const conversation = env[CLAUDE_CODE_SESSION_ENV];
  return `${CLAUDE_CODE_CLIENT}:${conversation !== undefined && conversation !== '' ? conversation : sessionId}`;
}

/**
 * How long a form may stay unanswered on the client: a day, as a request does by default. The
 * request's own wait (a foreground call's timeout) aborts it sooner.
 */
const ELICITATION_TIMEOUT_MS = 24 * 60 * 60_000;

/**
 * The prompt for one `tools/call`, when the client declared form elicitation; undefined otherwise.
 * A foreground call's form is sent as part of its request (`relatedRequestId`); a background call
 * has answered by the time its form is answered, so its form stands alone.
 */
export function elicitApproval(
  server: McpServer,
  requestId: RequestId,
  sessionId: string,
): ApprovalPrompt | undefined {
  if (server.server.getClientCapabilities()?.elicitation?.form === undefined) return undefined;
  return async (question, signal) => {
    const result = await server.server.elicitInput(
      {
        mode: 'form',
        message: approvalMessage(question),
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: 'Decision',
              enum: ['allow', 'deny'],
              enumNames: ['Allow: run the command', 'Deny: do not run it'],
            },
            reason: { type: 'string', title: 'Reason (shown to the agent when denied)' },
          },
          required: ['decision'],
        },
      },
      {
        ...(question.background ? {} : { relatedRequestId: requestId }),
        signal,
        timeout: ELICITATION_TIMEOUT_MS,
      },
    );
    const by = elicitedBy(server.server.getClientVersion()?.name, sessionId);
    if (result.action === 'decline') return { approved: false, by, reason: 'declined' };
    if (result.action !== 'accept') return undefined;
    const reason = typeof result.content?.reason === 'string' ? result.content.reason.trim() : '';
    const decision: ApprovalDecision = {
      approved: result.content?.decision === 'allow',
      by,
      ...(reason !== '' ? { reason } : {}),
    };
    return decision;
  };
}

/**
 * The form's message: what would run, where, and why the policy asks, each on one line in the
 * shown form (shared/shown-text.ts): no character of them reaches the user's screen as a control,
 * and none can start a paragraph of its own.
 */
function approvalMessage(question: ApprovalQuestion): string {
  return [
    `Run this command? (approval ${question.approvalId})`,
    shownLine(question.command),
    ...(question.workdir !== undefined ? [`in ${shownLine(question.workdir)}`] : []),
    `The policy asks because: ${shownLine(question.reason)}`,
  ].join('\n\n');
}
