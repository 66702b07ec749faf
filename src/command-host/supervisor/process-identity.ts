/**
 * Processes named so that a reused pid is never taken for them: pid and start time (field 22 of
 * /proc/<pid>/stat), and this boot's id.
 */
import { readFileSync } from 'node:fs';

let cachedBootId: string | undefined;

/** This boot's id: a record from another boot names processes that no longer exist. */
export function currentBootId(): string {
  cachedBootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return cachedBootId;
}

/**
 * A process's /proc/<pid>/stat: its command name, and the fields after it (`fields[0]` is the state,
 * field 3 of the file), or undefined if it is gone.
 */
export function procStat(pid: number): { name: string; fields: string[] } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
  const nameEnd = stat.lastIndexOf(')');
  return { name: stat.slice(stat.indexOf('(') + 1, nameEnd), fields: stat.slice(nameEnd + 2).split(' ') };
}

/** A process's start time (field 22 of /proc/<pid>/stat), or undefined if it is gone or a zombie. */
export function processStart(pid: number): number | undefined {
  const fields = procStat(pid)?.fields;
  if (fields === undefined || fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return Number(fields[19]);
}

/** A process as it cannot be mistaken for another: its pid and start time (this boot). */
export interface ProcessIdentity {
  pid: number;
  start: number;
}

let ownIdentity: ProcessIdentity | undefined;

/** This process. */
export function thisProcess(): ProcessIdentity {
  ownIdentity ??= { pid: process.pid, start: processStart(process.pid) ?? 0 };
  return ownIdentity;
}

/** The process is this one. */
export function isThisProcess(identity: ProcessIdentity): boolean {
  const self = thisProcess();
  return identity.pid === self.pid && identity.start === self.start;
}

/** The process still runs (this boot): the pid's process started when it did. */
export function isRunning(identity: ProcessIdentity): boolean {
  return identity.pid > 0 && processStart(identity.pid) === identity.start;
}
