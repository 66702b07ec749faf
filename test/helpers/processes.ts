/** This machine's processes and free ports, and a poll until a condition holds. */
import { execFileSync } from 'node:child_process';
import net from 'node:net';

/** The command lines of this machine's processes that match `pattern`. */
export function processesMatching(pattern: RegExp): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => pattern.test(line));
}

/**
 * Polls `condition` every `intervalMs` until it holds, or fails after `timeoutMs` (with what
 * `explain` says of the state then).
 */
export async function waitFor(
  condition: () => boolean,
  timeoutMs = 10_000,
  intervalMs = 50,
  explain?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs}ms${explain ? `: ${explain()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Two loopback ports free right now (held open together, so they differ). */
export async function freePorts(): Promise<[number, number]> {
  const servers = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<net.Server>((resolve) => {
          const server = net.createServer();
          server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return [ports[0] ?? 0, ports[1] ?? 0];
}
