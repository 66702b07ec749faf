/** This host's identity across worker restarts, which names its own task queues (`<task queue>@<host id>`). */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * A host identity that is the same after a restart of the worker (not a pid): the hostname for
 * people, plus a hash of the machine id (confidential, so never shown raw) and the spill directory,
 * since two workers with different spill directories on one machine cannot re-attach each other's
 * commands.
 */
export function defaultHostId(spillDir: string): string {
  const hash = createHash('sha256').update(machineId()).update('\0').update(spillDir).digest('hex');
  const name =
    os
      .hostname()
      .replace(/[^\w.-]/g, '-')
      .slice(0, 60) || 'host';
  return `${name}-${hash.slice(0, 12)}`;
}

function machineId(): string {
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const id = readFileSync(file, 'utf8').trim();
      if (id) return id;
    } catch {
      // Try the next source.
    }
  }
  return os.hostname();
}
