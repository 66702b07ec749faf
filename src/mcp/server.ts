/**
 * The MCP face of the tools: a thin mapping from `createBashTools`' tools to MCP `tools/list` and
 * `tools/call`. Schemas, texts and errors are the tools' own; the server only adds the session's
 * completion notices, MCP Tasks for a task-augmented `bash` call (see mcp-tasks.ts), and asking the
 * client about an approval request by elicitation (approval-elicitation.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '../shared/tool-types.js';
import { elicitApproval } from './approval-elicitation.js';
import { CHANNEL_CAPABILITY } from './channel-notices.js';
import { MCP_SERVER_NAME, type McpNotices } from './mcp-notices.js';
import { type McpTasks, TaskRequestError } from './mcp-tasks.js';
import { serveTaskRequests, TASK_TOOLS, TASKS_CAPABILITY } from './task-requests.js';

export interface McpSession {
  /** The agent session every call acts as. */
  sessionId: string;
  /** The session's working directory: relative workdirs resolve against it. */
  cwd: string;
}

/**
 * One MCP server object (one per stdio connection or HTTP session) offering every tool as it is:
 * its JSON Schema in `tools/list`, and `tools/call` handing the raw arguments to its `execute`, so
 * a bad call gets the library's own error text rather than the SDK's validation message.
 */
export function createMcpServer(
  tools: readonly Tool[],
  session: McpSession,
  notices: McpNotices,
  tasks: McpTasks,
  version: string,
  options: { channel?: boolean } = {},
): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version },
    {
      capabilities: {
        tools: { listChanged: false },
        logging: {},
        tasks: TASKS_CAPABILITY,
        ...(options.channel === true ? { experimental: { [CHANNEL_CAPABILITY]: {} } } : {}),
      },
    },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    await notices.sendWith(extra.sendNotification);
    notices.listed(server);
    return {
      tools: tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as { type: 'object'; [key: string]: unknown },
        execution: { taskSupport: TASK_TOOLS.has(tool.name) ? 'optional' : 'forbidden' },
      })),
    };
  });
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    await notices.sendWith(extra.sendNotification);
    notices.called(server);
    await notices.channelSettled();
    await notices.claimPendingOutput();
    const tool = byName.get(request.params.name);
    if (tool === undefined)
      throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    if (request.params.task !== undefined) {
      // The spec's answer to a task-augmented call of a tool whose taskSupport is "forbidden".
      if (!TASK_TOOLS.has(tool.name))
        throw new TaskRequestError(ErrorCode.MethodNotFound, `Tool ${tool.name} does not run as a task`);
      return tasks.create(tool, request.params.arguments, extra.signal);
    }
    const approvalPrompt = elicitApproval(server, extra.requestId, session.sessionId);
    const result = await tool.execute(request.params.arguments, {
      agent: { sessionId: session.sessionId, cwd: session.cwd },
      signal: extra.signal,
      ...(approvalPrompt !== undefined ? { approvalPrompt } : {}),
    });
    return notices.addTo(result);
  });
  serveTaskRequests(server, tasks, notices);
  notices.attach(server);
  return server;
}
