/**
 * The MCP sessions one HTTP server holds: at most so many at once, and each ended (its server
 * object closed, which closes its transport) once it has had no request open for its idle time.
 * An open request is a call under way or an event stream a client listens on.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface SessionLimits {
  maxSessions: number;
  idleMs: number;
}

/** A session's server object and the transport it is connected to. */
export interface SessionObjects {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
}

interface HeldSession extends SessionObjects {
  /** The session's requests whose response is still open. */
  open: number;
  idleTimer?: NodeJS.Timeout;
}

export class HttpSessions {
  private readonly sessions = new Map<string, HeldSession>();
  /** Initialize requests under way: each holds a place until it makes a session or fails. */
  private starting = 0;

  constructor(private readonly limits: SessionLimits) {}

  /** Holds a place for a new session; false when the server holds its most already. */
  reserve(): boolean {
    if (this.sessions.size + this.starting >= this.limits.maxSessions) return false;
    this.starting += 1;
    return true;
  }

  /** Gives back the place `reserve` held, for a request that made no session. */
  release(): void {
    this.starting -= 1;
  }

  /** Holds, in the place `reserve` held, the session `id` that the initialize request answered on `res` made. */
  add(id: string, objects: SessionObjects, res: ServerResponse): void {
    this.starting -= 1;
    const session: HeldSession = { ...objects, open: 0 };
    this.sessions.set(id, session);
    this.track(id, session, res);
  }

  /** Hands a request to session `id`'s transport; false, handing nothing, when no such session is held. */
  handle(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> | false {
    const session = this.sessions.get(id);
    if (session === undefined) return false;
    this.track(id, session, res);
    return session.transport.handleRequest(req, res);
  }

  /** Counts `res` as open on the session until it closes; its idle time runs once none is. */
  private track(id: string, session: HeldSession, res: ServerResponse): void {
    clearTimeout(session.idleTimer);
    session.open += 1;
    res.once('close', () => {
      session.open -= 1;
      if (session.open > 0 || this.sessions.get(id) !== session) return;
      session.idleTimer = setTimeout(() => this.expire(id), this.limits.idleMs).unref();
    });
  }

  /** Forgets a session whose transport closed (ended by its client, expired, or the server closing). */
  remove(id: string): void {
    clearTimeout(this.sessions.get(id)?.idleTimer);
    this.sessions.delete(id);
  }

  /** Closes every session's server object. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map(({ server }) => server.close()));
  }

  /**
   * Ends an idle session: forgotten at once (its id is unknown from now on, its place free), then
   * its server object closed, which closes its transport and takes it off the session's notices.
   */
  private expire(id: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.remove(id);
    // Closing ends the streams of a transport with none open: nothing is left to do if it fails.
    void Promise.allSettled([session.server.close()]);
  }
}
