/**
 * A session's notices as the MCP server delivers them: once as a logging notification, once as a
 * line atop the session's next tool result (server.ts puts it there), never twice; or, to a client
 * that takes channels (`--channel`), once as a channel message and no other way.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { CHANNEL_CONNECT_DEADLINE_MS, CHANNEL_SETTLE_MS } from '../shared/limits.js';
import type { AgentSessions } from '../shared/notice.js';
import { noticeOutputIsCut } from '../shared/render-notice.js';
import type { TextBlock, ToolResult } from '../shared/tool-types.js';
import { CLAUDE_CODE_CLIENT } from './approval-elicitation.js';
import { CHANNEL_METHOD, channelMessage } from './channel-notices.js';
import type { McpTasks } from './mcp-tasks.js';
import { type NoticeStore, noticeIdOf, taskIdOfNotice } from './notice-store.js';

export interface McpNoticesOptions {
  /** The ended task's status for `notifications/tasks/status`. @default none sent */
  tasks?: McpTasks;
  /**
   * Deliver every notice as a Claude Code channel message (`notifications/claude/channel`), and
   * no other way: the client takes channels (the user turned them on). @default false
   */
  channel?: boolean;
  /**
   * Moves the task's read position to the end of its output, once its completion notice showed all
   * of it (atop a tool result, or as a channel message): a later `bash_output` does not show those
   * lines again. @default nothing moves
   */
  claimOutput?: (taskId: string) => Promise<unknown>;
  /** @default CHANNEL_SETTLE_MS */
  channelSettleMs?: number;
  /**
   * When this server's process started (epoch ms), to tell a first connection that came after
   * CHANNEL_CONNECT_DEADLINE_MS. @default performance.timeOrigin
   */
  startedAtMs?: number;
  /** Told, once, that the channel was given up for the ways of a client without one. @default none */
  onChannelGivenUp?: (connectedAfterMs: number) => void;
}

/** The server's name in the MCP handshake, and the logger name of its notices. */
export const MCP_SERVER_NAME = 'durable-bash';

/**
 * The session's notices, as the agent worker's `agents`. Each is recorded in the session's notice
 * file before the inject succeeds. It goes out once as a logging notification (level `notice`): at
 * once to every client connected then, else along with the next request any client makes (its
 * `tools/list` or `tools/call`, ahead of the answer). And it is put once as a line at the top of the
 * session's next tool result. Neither way repeats, across restarts too. The clients connected then
 * also get the ended task's `notifications/tasks/status`; and once a client has fetched a task's
 * result with `tasks/result`, its notice is settled: no line in a tool result.
 *
 * With `channel`, each goes out once as a channel message instead, and neither of those ways: at
 * once to the clients whose channel handler is there by now (see `CHANNEL_SETTLE_MS`), else as soon
 * as one's is, across restarts too.
 */
export class McpNotices implements AgentSessions {
  private readonly servers = new Set<McpServer>();
  /** With `channel`: the servers whose client takes channel messages by now. */
  private readonly channelReady = new Set<McpServer>();
  /** Channel sends, one at a time: a notice must not go out twice from two triggers at once. */
  private channelSends: Promise<void> = Promise.resolve();
  private readonly tasks: McpTasks | undefined;
  /** Cleared when the first connection came too late for Claude Code to take the channel. */
  private channel: boolean;
  private readonly claimOutput: ((taskId: string) => Promise<unknown>) | undefined;
  private readonly channelSettleMs: number;
  private readonly startedAtMs: number;
  private readonly onChannelGivenUp: ((connectedAfterMs: number) => void) | undefined;
  private initializedOnce = false;
  /** Pending notices whose output was claimed before a tool ran, until a result takes them. */
  private readonly claimed = new Set<string>();
  /** Claims of notices that arrived while a tool ran: the next call waits for them. */
  private lateClaims: Promise<void> = Promise.resolve();

  constructor(
    private readonly sessionId: string,
    private readonly store: NoticeStore,
    options: McpNoticesOptions = {},
  ) {
    this.tasks = options.tasks;
    this.channel = options.channel === true;
    this.claimOutput = options.claimOutput;
    this.channelSettleMs = options.channelSettleMs ?? CHANNEL_SETTLE_MS;
    this.startedAtMs = options.startedAtMs ?? performance.timeOrigin;
    this.onChannelGivenUp = options.onChannelGivenUp;
  }

  async inject(sessionId: string, content: string, options: { noticeId: string }): Promise<boolean> {
    // Only this session's notices come to its queue; another's has no session here.
    if (sessionId !== this.sessionId) return false;
    this.store.record(options.noticeId, content);
    // Recorded is delivered for the inject: the file keeps it until a client takes channel messages.
    if (this.channel) void this.sendChannelMessages().catch(() => undefined);
    else if (this.servers.size > 0)
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
    server.server.oninitialized = () => {
      this.servers.add(server);
      if (this.initializedOnce) return;
      this.initializedOnce = true;
      // Claude Code waits for an `alwaysLoad` server before its first turn only so long: a server
      // that came later missed the turn's registration, and its channel messages would be dropped
      // until a later turn. Its notices take the ways of a client without channels instead.
      const connectedAfterMs = Date.now() - this.startedAtMs;
      const claudeCode = server.server.getClientVersion()?.name === CLAUDE_CODE_CLIENT;
      if (this.channel && claudeCode && connectedAfterMs > CHANNEL_CONNECT_DEADLINE_MS) {
        this.channel = false;
        this.onChannelGivenUp?.(Math.round(connectedAfterMs));
      }
    };
    server.server.onclose = () => {
      this.servers.delete(server);
      this.channelReady.delete(server);
    };
  }

  /**
   * With `channel`: the server's client listed its tools. Its channel handler is there a moment
   * later, so its notices go out after CHANNEL_SETTLE_MS (if no `tools/call` said so sooner).
   */
  listed(server: McpServer): void {
    if (!this.channel || this.channelReady.has(server)) return;
    setTimeout(() => this.readyForChannel(server), this.channelSettleMs).unref();
  }

  /** With `channel`: the server's client called a tool, in a turn: its channel handler is there. */
  called(server: McpServer): void {
    if (this.channel) this.readyForChannel(server);
  }

  private readyForChannel(server: McpServer): void {
    if (this.channelReady.has(server) || !this.servers.has(server)) return;
    this.channelReady.add(server);
    // A failure (the notice file unreadable) leaves the notices pending for the next trigger.
    void this.sendChannelMessages().catch(() => undefined);
  }

  /**
   * Sends each pending notice as a channel message to the clients that take them now. Each is taken
   * (delivered) before it is sent, so a server that dies in between loses that message rather than
   * repeating it; one that reached no client is put back. A completion notice that showed all of its
   * task's output then moves the task's read position past it.
   */
  private sendChannelMessages(): Promise<void> {
    const send = async () => {
      if (this.channelReady.size === 0) return;
      for (const notice of this.store.pending()) {
        if (!this.store.takeOne(notice.noticeId)) continue;
        // Spread: the SDK wants an object with an index signature, which an interface is not.
        const params = { ...channelMessage(notice.noticeId, notice.content) };
        const outcomes = await Promise.allSettled(
          [...this.channelReady].map((server) =>
            server.server.notification({ method: CHANNEL_METHOD, params }),
          ),
        );
        if (!outcomes.some((outcome) => outcome.status === 'fulfilled')) {
          this.store.putBack(notice);
          return;
        }
        await this.claimShown(notice);
      }
    };
    this.channelSends = this.channelSends.then(send, send);
    return this.channelSends;
  }

  /**
   * Resolves once the channel messages being sent are out and their tasks' read positions moved: a
   * `bash_output` the message prompted reads after that.
   */
  async channelSettled(): Promise<void> {
    await this.channelSends.catch(() => undefined);
  }

  /**
   * Sends the notices not yet logged along with a request (`extra.sendNotification`): on Streamable
   * HTTP they travel in that request's own stream, which a client always reads. None with `channel`.
   */
  async sendWith(send: (notification: LoggingMessageNotification) => Promise<void>): Promise<void> {
    if (this.channel) return;
    await this.sendLogs((notice) => send(notice).then(() => true));
  }

  /**
   * Before a tool runs whose result the pending notices will top (`addTo`): each completion notice
   * among them that shows all of its task's output moves the task's read position past it, so a
   * `bash_output` in this very call (or later) does not show those lines a second time.
   */
  async claimPendingOutput(): Promise<void> {
    await this.lateClaims;
    if (this.channel || this.claimOutput === undefined) return;
    const pending = this.store.pending();
    // Forget those another way took (settled by tasks/result, another server's result).
    for (const id of this.claimed)
      if (!pending.some((notice) => notice.noticeId === id)) this.claimed.delete(id);
    for (const notice of pending) {
      if (this.claimed.has(notice.noticeId)) continue;
      await this.claimShown(notice);
      this.claimed.add(notice.noticeId);
    }
  }

  /** Moves the read position of a completion notice's task past the output it showed, when it showed all. */
  private async claimShown(notice: { noticeId: string; content: string }): Promise<void> {
    const taskId = taskIdOfNotice(notice.noticeId);
    if (taskId === undefined || noticeOutputIsCut(notice.content)) return;
    // A read that fails leaves the position where it was: the output comes again, nothing is lost.
    await this.claimOutput?.(taskId).catch(() => undefined);
  }

  /**
   * Prepends the pending notices to a tool result, one line each, and marks them delivered. None
   * with `channel`: they go as channel messages.
   */
  addTo(result: ToolResult): CallToolResult {
    const notices = this.channel ? [] : this.store.takeAll();
    // One that arrived while the tool ran moves the position now: for later reads (this call's
    // read, if it was one of that task, showed its lines too).
    const late = notices.filter((notice) => !this.claimed.delete(notice.noticeId));
    if (late.length > 0)
      this.lateClaims = this.lateClaims.then(async () => {
        for (const notice of late) await this.claimShown(notice);
      });
    const content =
      notices.length === 0
        ? result.content
        : [textBlock(notices.map((notice) => notice.content).join('\n')), ...result.content];
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
