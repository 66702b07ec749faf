/** `startMcpServer`'s `http` options as they are checked before anything starts: defaults, and what is refused. */
import { describe, expect, it } from 'vitest';
import { compileMcpHttpOptions } from '../../src/mcp/http.js';
import { DEFAULT_MCP_HTTP_MAX_SESSIONS, DEFAULT_MCP_HTTP_SESSION_IDLE_MS } from '../../src/shared/limits.js';

describe("startMcpServer's http options", () => {
  it('fill the session limits with their defaults', () => {
    expect(
      compileMcpHttpOptions({ host: '127.0.0.1', port: 0, auth: { kind: 'bearer', token: 'abc' } }),
    ).toEqual({
      host: '127.0.0.1',
      port: 0,
      auth: { kind: 'bearer', token: 'abc' },
      limits: { maxSessions: DEFAULT_MCP_HTTP_MAX_SESSIONS, idleMs: DEFAULT_MCP_HTTP_SESSION_IDLE_MS },
    });
  });

  it('allow no token on a loopback host only', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '[::1]', 'localhost'])
      expect(compileMcpHttpOptions({ host, port: 0, auth: { kind: 'none' } }).auth).toEqual({ kind: 'none' });
    for (const host of ['0.0.0.0', '[::]', '192.0.2.2', 'devbox.lan'])
      expect(() => compileMcpHttpOptions({ host, port: 0, auth: { kind: 'none' } })).toThrow(
        `invalid http.auth: no token is allowed only on a loopback host (127.0.0.1, [::1], localhost), got ${host}`,
      );
  });

  it('refuse a token that cannot travel in the header, and limits that are not positive integers', () => {
    const listen = { host: '127.0.0.1', port: 0 };
    expect(() => compileMcpHttpOptions({ ...listen, auth: { kind: 'bearer', token: 'a\nb' } })).toThrow(
      'invalid MCP token from http.auth.token: expected letters, digits and -._~+/ (then = padding), got another character at position 2',
    );
    expect(() => compileMcpHttpOptions({ ...listen, auth: { kind: 'bearer', token: 'a=b' } })).toThrow(
      'invalid MCP token from http.auth.token: expected letters, digits and -._~+/ (then = padding), got an = before its end',
    );
    expect(() =>
      compileMcpHttpOptions({ ...listen, auth: { kind: 'bearer', token: 't' }, maxSessions: 0 }),
    ).toThrow('invalid http.maxSessions: expected a positive integer, got 0');
    expect(() =>
      compileMcpHttpOptions({ ...listen, auth: { kind: 'bearer', token: 't' }, sessionIdleMs: 1.5 }),
    ).toThrow('invalid http.sessionIdleMs: expected a positive integer, got 1.5');
  });
});
