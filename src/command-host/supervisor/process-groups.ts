/**
 * Ending a task's processes: through its supervisor (SIGTERM, SIGKILL after the grace), and past a
 * supervisor that stopped doing its job or is gone (its cgroups and its group, SIGKILLed).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import type { Logger } from '@temporalio/common';
import { KILL_GRACE_MS } from '../../shared/limits.js';
import { procStat } from './process-identity.js';
import { supervisorPath } from './supervisor.js';
import { isSameProcess, type SupervisorRecord } from './supervisor-records.js';

/**
 * Signals the process a record names (its pid and start time), or its process group, through the
 * supervisor binary's pidfd (Node has none): a pid whose process ended since the record was read,
 * and which another process took, is never signalled. True when the signal went.
 */
export function signalRecorded(
  which: '--signal' | '--signal-group',
  pid: number,
  start: number,
  signal: NodeJS.Signals,
): boolean {
  const sent = spawnSync(
    supervisorPath(),
    [which, String(pid), String(start), String(constants.signals[signal])],
    {
      stdio: 'ignore',
    },
  );
  return sent.status === 0;
}

/**
 * Asks the supervisor to end the command: SIGTERM is forwarded to the command's process group,
 * SIGUSR1 makes it SIGKILL the group; SIGUSR2 closes the command's stdin once what its FIFO holds
 * went in; SIGWINCH resizes a terminal task's terminal to what its size file says. Signals nothing
 * unless the pid is still that supervisor.
 */
export function signalSupervisor(
  record: SupervisorRecord,
  signal: 'SIGTERM' | 'SIGUSR1' | 'SIGUSR2' | 'SIGWINCH',
): boolean {
  if (!isSameProcess(record, 'supervisor')) return false;
  return signalRecorded('--signal', record.supervisorPid, record.supervisorStart, signal);
}

/** How long after its SIGKILL a supervisor may take to record the end before it is killed itself. */
const FORCED_END_AFTER_MS = 6_000;

/**
 * Ends the command's group through its supervisor: SIGTERM now, SIGKILL (SIGUSR1) after the grace.
 * A supervisor that still runs FORCED_END_AFTER_MS later has stopped doing its job: the task's
 * cgroups, its group and the supervisor itself are SIGKILLed, so that a kill always ends (the task
 * is then lost, its exit status unknown), and `onForced` hears what the processes were doing.
 * Returns what cancels the timers once the end is known.
 */
export function endGroup(record: SupervisorRecord, onForced?: (state: string) => void): () => void {
  signalSupervisor(record, 'SIGTERM');
  const grace = setTimeout(() => signalSupervisor(record, 'SIGUSR1'), KILL_GRACE_MS);
  const force = setTimeout(() => {
    if (!isSameProcess(record, 'supervisor')) return;
    onForced?.(processStates(record));
    killOrphanedGroup(record);
    signalRecorded('--signal', record.supervisorPid, record.supervisorStart, 'SIGKILL');
  }, KILL_GRACE_MS + FORCED_END_AFTER_MS);
  return () => {
    clearTimeout(grace);
    clearTimeout(force);
  };
}

/** The `onForced` of `endGroup` that logs the forced end of a task's command as a warning. */
export function warnForcedEnd(log: Pick<Logger, 'warn'>, taskId: string): (state: string) => void {
  return (state) => log.warn(`task ${taskId}: its supervisor did not end the command; killed it`, { state });
}

/** What a task's supervisor and the processes in its cgroups are doing: `pid name state (wchan)`, for a log. */
function processStates(record: SupervisorRecord): string {
  const pids = new Set([record.supervisorPid]);
  for (const dir of record.cgroups ?? []) for (const pid of cgroupMembers(dir) ?? []) pids.add(pid);
  return [...pids]
    .map((pid) => {
      const stat = procStat(pid);
      let wchan = '?';
      try {
        wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8').trim();
      } catch {
        // Gone meanwhile.
      }
      return `${pid} ${stat?.name ?? '?'} ${stat?.fields[0] ?? '?'} (${wchan})`;
    })
    .join(', ');
}

/** The pids in a cgroup, or undefined when there is no such cgroup. */
function cgroupMembers(dir: string): number[] | undefined {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * Ends a command group whose supervisor is gone (killed), so that nothing runs that no one can
 * report: SIGKILL to the group, only while its leader is still the recorded process.
 */
export function killOrphanedGroup(record: SupervisorRecord): void {
  // The task's cgroups hold whatever is left, even what left the group (they are the task's own,
  // so they hold no other task's processes).
  for (const dir of record.cgroups ?? []) killCgroup(dir);
  if (!isSameProcess(record, 'command')) return;
  signalRecorded('--signal-group', record.pid, record.pidStart, 'SIGKILL');
}

/** SIGKILLs every process in a cgroup (cgroup.kill, else each member), then removes it. */
function killCgroup(dir: string): void {
  try {
    writeFileSync(path.join(dir, 'cgroup.kill'), '1');
  } catch {
    if (cgroupMembers(dir) === undefined) return; // No such cgroup: nothing to end.
    // Each member through a pidfd, checked to be in the cgroup still (the supervisor binary).
    spawnSync(supervisorPath(), ['--kill-cgroup', dir], { stdio: 'ignore' });
  }
  // Removed once empty; a later scan tries again if processes were still exiting.
  try {
    rmdirSync(dir);
  } catch {
    // Still busy.
  }
}
