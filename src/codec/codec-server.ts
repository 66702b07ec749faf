/**
 * A codec server (Temporal's remote codec HTTP protocol): POST `.../encode` and `.../decode` take and
 * return `{ "payloads": [{ "metadata": { key: base64 }, "data": base64 }] }`, so the Web UI and the
 * `temporal` CLI can show decrypted data. Every request needs the token, as `Authorization: Bearer
 * <token>` or as the path's first segment (`/<token>/decode`: the Web UI sends no Authorization
 * header unless it has a login of its own); browsers may call it only from the pinned UI origins.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

/** The largest request body accepted: Temporal's gRPC message limit. */
const CODEC_SERVER_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The Web UI origins of `temporal server start-dev` (it serves the UI on both names). */
export const DEFAULT_UI_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'] as const;

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The secret every request must carry. */
  token: string;
  /** Origins whose pages may call the server (CORS). @default DEFAULT_UI_ORIGINS */
  allowedOrigins?: readonly string[];
  /** @default '127.0.0.1' (loopback only) */
  host?: string;
  /** 0 picks a free port. @default 8888 */
  port?: number;
}

export interface RunningCodecServer {
  /** `http://<host>:<port>` */
  url: string;
  close(): Promise<void>;
}

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

/** Thrown by the request handling for a request the server refuses; answered with its status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts a codec server; resolves once it listens. */
export async function startCodecServer(options: CodecServerOptions): Promise<RunningCodecServer> {
  if (options.token.length === 0) throw new Error('a codec server needs a non-empty token');
  const allowedOrigins = new Set((options.allowedOrigins ?? DEFAULT_UI_ORIGINS).map(serializedOrigin));
  const tokenDigest = digest(options.token);
  const server = createServer((req, res) => {
    handle(req, res, options.codec, tokenDigest, allowedOrigins).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof HttpError ? err.message : 'internal error';
      if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      sendJson(res, status, { error: message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8888, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  codec: PayloadCodec,
  tokenDigest: Buffer,
  allowedOrigins: ReadonlySet<string>,
): Promise<void> {
  const origin = req.headers.origin;
  // A browser page of any other origin gets no CORS headers, so it can read nothing; refusing its
  // requests outright also keeps it from spending the token of a user who pasted it in the UI.
  if (origin !== undefined) {
    if (!allowedOrigins.has(origin)) throw new HttpError(403, `origin ${origin} is not allowed`);
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Vary', 'Origin');
  }
  if (req.method === 'OPTIONS') {
    // A preflight carries no credentials; the request that follows must.
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'authorization, content-type, x-namespace');
    res.setHeader('Access-Control-Max-Age', '600');
    res.writeHead(204).end();
    return;
  }
  const segments = new URL(req.url ?? '/', 'http://codec').pathname.split('/').filter((s) => s !== '');
  if (!authorized(req, segments, tokenDigest)) throw new HttpError(401, 'missing or wrong token');
  const operation = segments.at(-1);
  if (operation !== 'encode' && operation !== 'decode') throw new HttpError(404, 'not found');
  if (req.method !== 'POST') throw new HttpError(405, 'use POST');
  const payloads = parseBody(await readBody(req));
  let result: Payload[];
  try {
    result = operation === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
  } catch (err) {
    throw new HttpError(400, err instanceof Error ? err.message : String(err));
  }
  sendJson(res, 200, { payloads: result.map(toJson) });
}

/**
 * An origin as browsers send it in the Origin header (`http://localhost:8233/` and
 * `https://ui.example:443` become `http://localhost:8233` and `https://ui.example`), so a pinned
 * origin written with a path or a default port still matches.
 */
function serializedOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new Error(`invalid UI origin ${JSON.stringify(origin)}: expected <scheme>://<host>[:<port>]`);
  }
  if (url.origin === 'null') {
    throw new Error(`invalid UI origin ${JSON.stringify(origin)}: expected <scheme>://<host>[:<port>]`);
  }
  return url.origin;
}

/** The token as a bearer header, or as the path's first segment (the path then continues). */
function authorized(req: IncomingMessage, segments: string[], tokenDigest: Buffer): boolean {
  const header = req.headers.authorization;
  const bearer = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
  if (bearer !== undefined && timingSafeEqual(digest(bearer), tokenDigest)) return true;
  const [first] = segments;
  if (
    segments.length >= 2 &&
    first !== undefined &&
    timingSafeEqual(digest(decodeSegment(first)), tokenDigest)
  ) {
    segments.shift();
    return true;
  }
  return false;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Comparing digests keeps the comparison constant-time whatever the lengths. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > CODEC_SERVER_MAX_BODY_BYTES) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseBody(body: Buffer): Payload[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'expected a JSON body');
  }
  const payloads = (parsed as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(payloads)) throw new HttpError(400, 'expected {"payloads": [...]}');
  return payloads.map(fromJson);
}

function fromJson(value: unknown): Payload {
  const { metadata, data } = (value ?? {}) as JsonPayload;
  if (typeof metadata !== 'object' || (data !== undefined && data !== null && typeof data !== 'string')) {
    throw new HttpError(400, 'expected each payload as {"metadata": {...}, "data": "<base64>"}');
  }
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([key, encoded]) => [key, Buffer.from(String(encoded), 'base64')]),
    ),
    data: Buffer.from(data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, bytes]) => [
        key,
        Buffer.from(bytes ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
