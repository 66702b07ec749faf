/**
 * How a worker host keeps every process of a task inside the task: a cgroup per task where the
 * host lets the worker make one (a kill then reaches every process in it, and the process and
 * memory limits hold), else the supervisor's own process tree (it is the subreaper of everything
 * the command starts, so a `setsid` or double-forked process is still found, but only while the
 * supervisor lives). Found once at worker start, by making and removing a probe cgroup.
 */
import { accessSync, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The limits a task's supervisor enforces. 0 = no limit. */
export interface TaskLimits {
  /** Bytes of each of stdout and stderr kept in its spill file; the command's later writes fail. */
  outputBytesPerStream: number;
  /** Processes and threads (pids.max); needs a cgroup with the pids controller. */
  processes: number;
  /** Memory (memory.max / memory.limit_in_bytes); needs a cgroup with the memory controller. */
  memoryBytes: number;
}

export interface Containment {
  kind: 'cgroup' | 'process-tree';
  /** Each task gets `<parent>/<task id>` in every one of these (one per cgroup hierarchy). */
  cgroupParents: readonly string[];
  /** What is enforced here: a limit whose controller is missing is reported as 0. */
  limits: TaskLimits;
  /** One line for the worker's start: the mechanism and the limits in force. */
  summary: string;
}

/** A cgroup hierarchy this process belongs to: where it is mounted and our cgroup's directory. */
interface Hierarchy {
  version: 1 | 2;
  controllers: readonly string[];
  /** Our own cgroup's directory in it. */
  dir: string;
}

/** The cgroup directory that holds a task's cgroups under our own cgroup in a hierarchy. */
const TASKS_DIR = 'durable-bash';

/**
 * Finds the strongest containment this host allows, with `wanted` limits cut to what it can
 * enforce. `processTreeOnly` skips cgroups (the fallback, chosen or tested).
 */
export function detectContainment(wanted: TaskLimits, processTreeOnly = false): Containment {
  const hierarchies = processTreeOnly ? [] : ownHierarchies();
  const parents: string[] = [];
  let processes = false;
  let memory = false;
  let killAll = false;
  for (const hierarchy of hierarchies) {
    const relevant =
      hierarchy.version === 2 || hierarchy.controllers.some((c) => c === 'pids' || c === 'memory');
    if (!relevant) continue;
    const found = probe(hierarchy, wanted);
    if (!found) continue;
    parents.push(path.join(hierarchy.dir, TASKS_DIR));
    processes ||= found.processes;
    memory ||= found.memory;
    killAll ||= found.killAll;
  }
  const limits: TaskLimits = {
    outputBytesPerStream: wanted.outputBytesPerStream,
    processes: processes ? wanted.processes : 0,
    memoryBytes: memory ? wanted.memoryBytes : 0,
  };
  if (parents.length === 0) {
    return {
      kind: 'process-tree',
      cgroupParents: [],
      limits,
      summary:
        "containment: the supervisor process tree (no cgroup can be made here); a task's processes end with it " +
        `while its supervisor lives; limits: ${describeLimits(limits)}`,
    };
  }
  return {
    kind: 'cgroup',
    cgroupParents: parents,
    limits,
    summary: `containment: a cgroup per task${killAll ? ' (cgroup.kill)' : ''} under ${parents.join(', ')}; limits: ${describeLimits(limits)}`,
  };
}

export function describeLimits(limits: TaskLimits): string {
  const parts = [
    limits.outputBytesPerStream > 0
      ? `${formatBytes(limits.outputBytesPerStream)} per output stream`
      : 'output unlimited',
    limits.processes > 0 ? `${limits.processes} processes` : 'processes not limited (no pids cgroup)',
    limits.memoryBytes > 0
      ? `${formatBytes(limits.memoryBytes)} memory`
      : 'memory not limited (no memory cgroup)',
  ];
  return parts.join(', ');
}

function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && value % 1024 === 0 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

/** The cgroup directories a task gets, one per parent. */
export function taskCgroups(containment: Containment, taskId: string): string[] {
  return containment.cgroupParents.map((parent) => path.join(parent, taskId));
}

/** The hierarchies this process is in, from /proc/self/mountinfo and /proc/self/cgroup. */
function ownHierarchies(): Hierarchy[] {
  let mountinfo: string;
  let membership: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    membership = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return [];
  }
  const paths = new Map<string, string>(); // controllers ("" for v2) -> our path
  for (const line of membership.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (match) paths.set(match[2] ?? '', match[3] ?? '/');
  }
  const found: Hierarchy[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fstype, , superOptions = ''] = right.split(' ');
    const root = unescapeMount(fields[3] ?? '/');
    const mountPoint = unescapeMount(fields[4] ?? '');
    if (fstype === 'cgroup2') {
      const own = paths.get('');
      if (own !== undefined)
        found.push({ version: 2, controllers: [], dir: joinCgroup(mountPoint, root, own) });
    } else if (fstype === 'cgroup') {
      const controllers = superOptions.split(',').filter((o) => o === 'pids' || o === 'memory');
      if (controllers.length === 0) continue;
      const own = [...paths.entries()].find(([names]) => names.split(',').includes(controllers[0] ?? ''));
      if (own) found.push({ version: 1, controllers, dir: joinCgroup(mountPoint, root, own[1]) });
    }
  }
  return found;
}

/** Our cgroup's directory: the mount shows the hierarchy from `root`, /proc/self/cgroup from its top. */
function joinCgroup(mountPoint: string, root: string, own: string): string {
  const relative = root !== '/' && own.startsWith(root) ? own.slice(root.length) : own;
  return path.join(mountPoint, relative);
}

function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * Makes the tasks' parent and a probe cgroup below it, and checks what the probe can do: hold a
 * process limit, a memory limit, and be killed whole. Undefined when no cgroup can be made.
 */
function probe(
  hierarchy: Hierarchy,
  wanted: TaskLimits,
): { processes: boolean; memory: boolean; killAll: boolean } | undefined {
  const parent = path.join(hierarchy.dir, TASKS_DIR);
  const dir = path.join(parent, `probe-${process.pid}`);
  try {
    mkdirSync(parent, { recursive: true });
    if (hierarchy.version === 2) enableControllers(hierarchy.dir, parent);
    mkdirSync(dir, { recursive: true });
  } catch {
    return undefined;
  }
  try {
    accessSync(path.join(dir, 'cgroup.procs'));
    const processes = wanted.processes > 0 && writes(dir, ['pids.max'], wanted.processes);
    const memory =
      wanted.memoryBytes > 0 && writes(dir, ['memory.max', 'memory.limit_in_bytes'], wanted.memoryBytes);
    const killAll = existsSync(path.join(dir, 'cgroup.kill'));
    return { processes, memory, killAll };
  } catch {
    return undefined;
  } finally {
    try {
      rmdirSync(dir);
    } catch {
      // A probe that cannot be removed is empty and harmless.
    }
  }
}

/**
 * In cgroup v2 a child has the pids and memory controllers only if every ancestor hands them down,
 * which our own cgroup can do only if no process sits in it (the worker does, unless it is the
 * root): try, and keep what works.
 */
function enableControllers(own: string, parent: string): void {
  for (const dir of [own, parent]) {
    for (const controller of ['+pids', '+memory']) {
      try {
        writeFileSync(path.join(dir, 'cgroup.subtree_control'), controller);
      } catch {
        // Not delegated to us, or processes in the way: that limit is not enforced here.
      }
    }
  }
}

function writes(dir: string, names: readonly string[], value: number): boolean {
  for (const name of names) {
    const file = path.join(dir, name);
    if (!existsSync(file)) continue;
    try {
      writeFileSync(file, String(value));
      return true;
    } catch {
      return false;
    }
  }
  return false;
}
