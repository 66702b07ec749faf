// Summaries of V8 CPU profiles (`node --cpu-prof`, one file per thread) over a window of time:
// each thread's self time per task, by package (or our own file, or a native) and by function,
// and for the natives that take most, the first of our functions up their stacks (who calls them).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What `node --cpu-prof` writes: a call tree, and which node each sample was in, with its time step. */
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** A span of the monotonic clock, in microseconds. */
export interface ProfileWindow {
  startUs: number;
  endUs: number;
}

/** How many rows each table keeps. */
const TOP = 15;

/**
 * `window` is on the monotonic clock in microseconds (`process.hrtime.bigint() / 1000n`), as the
 * profiles' sample times are; only samples inside it count, idle ones never.
 */
export function summarizeProfiles(dir: string, window: ProfileWindow, tasks: number): string {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort();
  return files
    .map((name) => summarize(name, JSON.parse(readFileSync(path.join(dir, name), 'utf8')), window, tasks))
    .join('\n');
}

function summarize(name: string, profile: CpuProfile, window: ProfileWindow, tasks: number): string {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const samplesOf = new Map<number, number>();
  let busyUs = 0;
  let atUs = profile.startTime;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    atUs += us;
    if (atUs < window.startUs || atUs > window.endUs) return;
    const node = nodes.get(id);
    if (node === undefined) return;
    const { callFrame } = node;
    if (callFrame.functionName === '(idle)') return;
    busyUs += us;
    add(byPlace, placeOf(callFrame), us);
    const fn = `${callFrame.functionName || '(anonymous)'} ${path.basename(callFrame.url)}:${callFrame.lineNumber + 1}`;
    add(byFunction, fn, us);
    if (!callFrame.url) add(samplesOf, id, us);
  });
  const perTask = (us: number) => `${(us / 1000 / tasks).toFixed(3)} ms`;
  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([key, us]) => `    ${perTask(us).padStart(9)}  ${key}`);
  // Natives (no url) by the first of our frames above them.
  const callers = new Map<string, number>();
  for (const [id, us] of samplesOf) {
    const native = nodes.get(id)?.callFrame.functionName ?? '';
    add(callers, `${native} <- ${ourCaller(id, nodes, parents)}`, us);
  }
  return [
    `${name}: busy ${(busyUs / 1000).toFixed(0)} ms in the window, ${perTask(busyUs)} a task`,
    '  by place:',
    ...rows(byPlace),
    '  by function:',
    ...rows(byFunction),
    '  natives, by our caller:',
    ...rows(callers),
  ].join('\n');
}

function add<K>(map: Map<K, number>, key: K, us: number): void {
  map.set(key, (map.get(key) ?? 0) + us);
}

/** A package, one of our files (dist or src), a Node.js module, or the native's own name. */
function placeOf({ url, functionName }: CallFrame): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage?.[1] !== undefined) return inPackage[1];
  if (url.startsWith('node:')) return url;
  if (/\/(dist|src)\//.test(url)) return `ours: ${path.basename(url)}`;
  return url ? path.basename(url) : functionName;
}

function ourCaller(id: number, nodes: Map<number, ProfileNode>, parents: Map<number, number>): string {
  for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
    const frame = nodes.get(at)?.callFrame;
    if (frame === undefined) break;
    const { url, functionName, lineNumber } = frame;
    if (/\/(dist|src)\//.test(url) && !url.endsWith('bundle.js'))
      return `${functionName || '(anonymous)'} ${path.basename(url)}:${lineNumber + 1}`;
  }
  return '(none of ours)';
}
