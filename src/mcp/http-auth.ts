/**
 * Who may use the MCP server over HTTP: the holders of its token, sent as `Authorization: Bearer
 * <token>` (RFC 6750) and compared in constant time; or, on a loopback listener only and when the
 * operator says so, every process of the machine. A request without the token is answered 401
 * before anything reads it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A bearer token every request must carry, or none (a loopback listener only). */
export type McpHttpAuth = { kind: 'bearer'; token: string } | { kind: 'none' };

/** RFC 6750's b64token: what a token may hold to travel in the header as it is. */
const BEARER_TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The challenge of a 401 (RFC 6750 §3): no OAuth metadata, since the token is the operator's. */
const CHALLENGE = 'Bearer realm="durable-bash"';

/** Why a request is refused, and the `WWW-Authenticate` challenge it gets with its 401. */
export interface Unauthorized {
  message: string;
  challenge: string;
}

/** Throws unless `token` can be a bearer token; `source` names where it came from. */
export function checkBearerToken(token: string, source: string): void {
  if (BEARER_TOKEN_SYNTAX.test(token)) return;
  const outside = [...token].findIndex((c) => !/[A-Za-z0-9\-._~+/=]/.test(c));
  const got =
    token === ''
      ? 'an empty one'
      : outside >= 0
        ? `another character at position ${outside + 1}`
        : 'an = before its end';
  // The token itself is never echoed: the line may land in a log.
  throw new Error(
    `invalid MCP token from ${source}: expected letters, digits and -._~+/ (then = padding), got ${got}`,
  );
}

/** The check of each request's credentials: undefined lets it through. */
export function requestAuthorization(auth: McpHttpAuth): (req: IncomingMessage) => Unauthorized | undefined {
  if (auth.kind === 'none') return () => undefined;
  const expected = digest(auth.token);
  return (req) => {
    const header = req.headers.authorization;
    if (header === undefined)
      return { message: 'missing Authorization header: expected Bearer <token>', challenge: CHALLENGE };
    const bearer = /^Bearer +(\S+) *$/i.exec(header)?.[1];
    if (bearer === undefined)
      return {
        message: 'invalid Authorization header: expected Bearer <token>, got another scheme',
        challenge: CHALLENGE,
      };
    if (!timingSafeEqual(digest(bearer), expected))
      return {
        message: 'invalid Authorization header: expected Bearer <token>, got a wrong token',
        challenge: `${CHALLENGE}, error="invalid_token"`,
      };
    return undefined;
  };
}

/** Comparing digests keeps the comparison constant-time whatever the lengths. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
