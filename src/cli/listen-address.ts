import { InvalidArgumentError } from 'commander';
import type { HttpListen } from '../mcp/http.js';

/** Parses a `[host:]port` flag (`--http`, `--metrics-port`): a bare port listens on 127.0.0.1; an IPv6 host is in brackets. */
export function parseHttpListen(value: string): HttpListen {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (match === null || port > 65_535)
    throw new InvalidArgumentError(`expected [host:]port, e.g. 8931 or 127.0.0.1:8931, got ${value}`);
  return { host: match[1] ?? '127.0.0.1', port };
}

/** The `host:port` form a bind address takes (an IPv6 host keeps its brackets). */
export function bindAddress(listen: HttpListen): string {
  return `${listen.host}:${listen.port}`;
}
