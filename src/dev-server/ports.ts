import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { procStat } from '../command-host/supervisor/process-identity.js';

/** The host the dev server binds (its gRPC port and its Web UI). */
export const DEV_SERVER_HOST = '127.0.0.1';

/** Binds `host:port` and closes it at once: `undefined` if the port is free, else the bind error's code. */
export function tryBind(port: number, host = DEV_SERVER_HOST): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** A port the system considers free right now (bind to port 0, read it, close). */
export function pickFreePort(host = DEV_SERVER_HOST): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not pick a free port'))));
    });
  });
}

export interface PortOwner {
  pid: number;
  /** The owner's command line, shortened for one line of output. */
  command: string;
}

/**
 * The process holding a LISTEN socket on `port` (any address), best effort on Linux: the socket's
 * inode from /proc/net/tcp{,6}, then the process with a file descriptor on it. `undefined` when
 * /proc does not tell (another OS, another user's process).
 */
export function portOwner(port: number): PortOwner | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const state = fields[3];
      const inode = fields[9];
      if (!local || state !== '0A' || !inode || inode === '0') continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) inodes.add(inode);
    }
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return { pid: Number(pid), command: commandLine(Number(pid)) };
    }
  }
  return undefined;
}

function commandLine(pid: number): string {
  const argv = argvOf(pid);
  if (argv.length === 0) return '?';
  argv[0] = path.basename(argv[0] ?? '');
  // Enough words to recognise it (`temporal server start-dev`, `node dist/cli/main.js dev`), not all of them.
  const words = argv.slice(0, 3).join(' ');
  return argv.length > 3 ? `${words} ...` : words;
}

/** `port 7233 is already in use (by pid 1234: temporal server start-dev ...)`, the owner part when known. */
export function portInUseMessage(port: number): string {
  const owner = portOwner(port);
  return `port ${port} is already in use${owner ? ` (by pid ${owner.pid}: ${owner.command})` : ''}`;
}

/**
 * The Temporal dev server an earlier `durable-bash dev` started on this database file and port and
 * left running when it was killed (SIGKILL leaves no time to stop it): its pid, or undefined. Only
 * a server whose parent is no longer a `dev` counts, so a `dev` still running is never touched.
 */
export function orphanedDevServer(port: number, dbFile: string): number | undefined {
  const owner = portOwner(port);
  if (!owner) return undefined;
  const argv = argvOf(owner.pid);
  const flag = (name: string) => argv[argv.indexOf(name) + 1];
  const isOurServer =
    argv.includes('start-dev') && flag('--port') === String(port) && flag('--db-filename') === dbFile;
  if (!isOurServer) return undefined;
  const parent = parentOf(owner.pid);
  const parentIsDev =
    parent !== undefined &&
    argvOf(parent).some(
      (word, i, all) => word === 'dev' && i > 0 && /durable-bash|main\.js$/.test(all[i - 1] ?? ''),
    );
  return parentIsDev ? undefined : owner.pid;
}

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** The parent pid (field 4 of /proc/<pid>/stat). */
function parentOf(pid: number): number | undefined {
  const ppid = procStat(pid)?.fields[1];
  return ppid === undefined ? undefined : Number(ppid);
}
