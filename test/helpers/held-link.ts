/**
 * A TCP link between a worker and the Temporal server that a test can hold one way: while held,
 * what the worker sends (a workflow task's completion, heartbeats, new polls) waits in the link,
 * while what the server sends (a poll's answer) still arrives. So a worker takes a workflow task
 * and the server hears its answer only when the test lets it, as when the worker's host is cut off
 * right after it took the task. Nothing of the machine's network changes: the link is a local proxy.
 */
import net from 'node:net';

export interface HeldLink {
  /** Where the worker connects instead of the server. */
  address: string;
  /** From now on, keeps what the worker sends. */
  hold(): void;
  /** Sends what was kept, in order, and passes everything on again. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a link on 127.0.0.1 to `serverAddress` (`host:port`). */
export async function startHeldLink(serverAddress: string): Promise<HeldLink> {
  const [host, port] = splitAddress(serverAddress);
  const sockets = new Set<net.Socket>();
  const kept: { upstream: net.Socket; chunk: Buffer }[] = [];
  let held = false;
  const server = net.createServer((worker) => {
    const upstream = net.connect(port, host);
    for (const socket of [worker, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined); // The other side's close ends the pair.
    }
    worker.on('data', (chunk: Buffer) => {
      if (held) kept.push({ upstream, chunk });
      else upstream.write(chunk);
    });
    upstream.pipe(worker);
    worker.on('close', () => upstream.destroy());
    upstream.on('close', () => worker.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: linkPort } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${linkPort}`,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const { upstream, chunk } of kept.splice(0)) if (!upstream.destroyed) upstream.write(chunk);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}
