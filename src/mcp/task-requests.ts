/**
 * The `tasks/*` requests of the 2025-11-25 experimental MCP tasks, served from Temporal by
 * `McpTasks` (not the SDK's TaskStore, which keeps tasks in one process): what the server declares,
 * which tools run as tasks, and the four request handlers.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpNotices } from './mcp-notices.js';
import type { McpTasks } from './mcp-tasks.js';

/** `tasks/list`, `tasks/cancel`, and task-augmented `tools/call`. */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
};

/**
 * The tools whose `execution.taskSupport` is "optional": `bash`, whose run is a task already. The
 * others answer at once (a read waits 45 s at most), so they are "forbidden".
 */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['bash']);

/** Serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` on one MCP server object. */
export function serveTaskRequests(server: McpServer, tasks: McpTasks, notices: McpNotices): void {
  server.server.setRequestHandler(GetTaskRequestSchema, (request) => tasks.get(request.params.taskId));
  server.server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const result = await tasks.result(request.params.taskId, extra.signal);
    notices.settle(request.params.taskId);
    return result;
  });
  server.server.setRequestHandler(ListTasksRequestSchema, (request) => tasks.list(request.params?.cursor));
  server.server.setRequestHandler(CancelTaskRequestSchema, (request) => tasks.cancel(request.params.taskId));
}
