/**
 * A session's completion notices as the MCP server delivers them: once as a logging notification,
 * once as a line atop the session's next tool result (server.ts puts it there), never twice.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import type { AgentSessions } from '../shared/notice.js';
import type { TextBlock, ToolResult } from '../shared/tool-types.js';
import type { McpTasks } from './mcp-tasks.js';
import { type NoticeStore, noticeIdOf, taskIdOfNotice } from './notice-store.js';

/** The server's name in the MCP handshake, and the logger name of its notices. */
export const MCP_SERVER_NAME = 'durable-bash';

/**
 * The session's completion notices, as the agent worker's `agents`. Each is recorded in the
 * session's notice file before the inject succeeds. It goes out once as a logging notification
 * (level `notice`): at once to every client connected then, else along with the next request any
 * client makes (its `tools/list` or `tools/call`, ahead of the answer). And it is put once as a line
 * at the top of the session's next tool result. Neither way repeats, across restarts too. The
 * clients connected then also get the ended task's `notifications/tasks/status`; and once a client
 * has fetched a task's result with `tasks/result`, its notice is settled: no line in a tool result.
 */
export class McpNotices implements AgentSessions {
  private readonly servers = new Set<McpServer>();

  constructor(
    private readonly sessionId: string,
    private readonly store: NoticeStore,
    private readonly tasks?: McpTasks,
  ) {}

  async inject(sessionId: string, content: string, options: { noticeId: string }): Promise<boolean> {
    // Only this session's notices come to its queue; another's has no session here.
    if (sessionId !== this.sessionId) return false;
    this.store.record(options.noticeId, content);
    if (this.servers.size > 0)
      await this.sendLogs((notice) =>
        Promise.allSettled([...this.servers].map((server) => server.sendLoggingMessage(notice.params))).then(
          (outcomes) => outcomes.some((outcome) => outcome.status === 'fulfilled'),
        ),
      );
    this.announceEnd(options.noticeId);
    return true;
  }

  /** The session has the task's result from `tasks/result`: its notice goes out neither way. */
  settle(taskId: string): void {
    this.store.settle(noticeIdOf(taskId));
  }

  /**
   * Sends the ended task's status (`notifications/tasks/status`) to the clients connected now, once
   * its workflow has closed; not awaited, so the inject answers at once. Optional in the spec, so
   * never kept for later: a client that was away polls `tasks/get`.
   */
  private announceEnd(noticeId: string): void {
    const taskId = taskIdOfNotice(noticeId);
    if (taskId === undefined || this.tasks === undefined || this.servers.size === 0) return;
    void this.tasks.ended(taskId).then((task) => {
      if (task === undefined) return;
      for (const server of this.servers)
        server.server
          .notification({ method: 'notifications/tasks/status', params: task })
          .catch(() => undefined);
    });
  }

  /** A server's client gets notices as they arrive once it has initialized, until it closes. */
  attach(server: McpServer): void {
    server.server.oninitialized = () => this.servers.add(server);
    server.server.onclose = () => this.servers.delete(server);
  }

  /**
   * Sends the notices not yet logged along with a request (`extra.sendNotification`): on Streamable
   * HTTP they travel in that request's own stream, which a client always reads.
   */
  async sendWith(send: (notification: LoggingMessageNotification) => Promise<void>): Promise<void> {
    await this.sendLogs((notice) => send(notice).then(() => true));
  }

  /** Prepends the pending notices to a tool result, one line each, and marks them delivered. */
  addTo(result: ToolResult): CallToolResult {
    const notices = this.store.take();
    const content =
      notices.length === 0 ? result.content : [textBlock(notices.join('\n')), ...result.content];
    return result.isError ? { content, isError: true } : { content };
  }

  /**
   * Sends each unlogged notice with `send` (true: it reached a client). Each is marked logged before
   * it is sent, so a server that dies in between loses that notification rather than repeating it.
   */
  private async sendLogs(
    send: (notification: LoggingMessageNotification) => Promise<boolean>,
  ): Promise<void> {
    const unlogged = this.store.unlogged();
    if (unlogged.length === 0) return;
    this.store.setLogged(
      unlogged.map((notice) => notice.noticeId),
      true,
    );
    const unsent: string[] = [];
    for (const notice of unlogged) {
      const notification: LoggingMessageNotification = {
        method: 'notifications/message',
        params: { level: 'notice', logger: MCP_SERVER_NAME, data: notice.content },
      };
      if (!(await send(notification).catch(() => false))) unsent.push(notice.noticeId);
    }
    this.store.setLogged(unsent, false);
  }
}

function textBlock(text: string): TextBlock {
  return { type: 'text', text };
}
