/**
 * The server's own Prometheus counters, read for what a task costs the server. The dev server
 * runs every service in one process and labels each series with `service_name`; a call through
 * the frontend is counted again by the service it reaches (history, matching), so only the
 * frontend's series count calls here.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus' text format (comments and histograms' `_bucket` lines included, as samples). */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1] as string] = (label[2] as string).replace(/\\(.)/g, '$1');
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(metricsUrl: string): Promise<Sample[]> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`${metricsUrl}: HTTP ${response.status}`);
  return parsePrometheus(await response.text());
}

/** The counters a server-cost window reads, summed for one namespace. */
export interface CostCounters {
  /** Frontend calls of every operation except workers' long polls (they are per worker, not per task). */
  frontendCalls: number;
  /** Frontend long polls (PollWorkflowTaskQueue, PollActivityTaskQueue, ...): reported, not counted per task. */
  frontendPolls: number;
  /** RecordActivityTaskHeartbeat(ById) calls through the frontend. */
  heartbeats: number;
  /** Persistence UpdateWorkflowExecution requests (any service): each a write of a workflow's mutable state. */
  updateWrites: number;
  /** Every frontend call, by operation (for the JSON). */
  byOperation: Record<string, number>;
}

/** `service_requests` or a prefixed name (`temporal_service_requests`), as servers configure. */
const isNamed = (name: string, base: string) => name === base || name === `temporal_${base}`;

export function costCounters(samples: Sample[], namespace: string): CostCounters {
  const counters: CostCounters = {
    frontendCalls: 0,
    frontendPolls: 0,
    heartbeats: 0,
    updateWrites: 0,
    byOperation: {},
  };
  for (const sample of samples) {
    if (sample.labels.namespace !== namespace) continue;
    const operation = sample.labels.operation ?? '';
    if (isNamed(sample.name, 'service_requests') && sample.labels.service_name === 'frontend') {
      counters.byOperation[operation] = (counters.byOperation[operation] ?? 0) + sample.value;
      if (/^Poll/.test(operation)) counters.frontendPolls += sample.value;
      else counters.frontendCalls += sample.value;
      if (/^RecordActivityTaskHeartbeat/.test(operation)) counters.heartbeats += sample.value;
    } else if (isNamed(sample.name, 'persistence_requests') && operation === 'UpdateWorkflowExecution') {
      counters.updateWrites += sample.value;
    }
  }
  return counters;
}

export function subtract(after: CostCounters, before: CostCounters): CostCounters {
  const byOperation: Record<string, number> = {};
  for (const [operation, value] of Object.entries(after.byOperation)) {
    const delta = value - (before.byOperation[operation] ?? 0);
    if (delta !== 0) byOperation[operation] = delta;
  }
  return {
    frontendCalls: after.frontendCalls - before.frontendCalls,
    frontendPolls: after.frontendPolls - before.frontendPolls,
    heartbeats: after.heartbeats - before.heartbeats,
    updateWrites: after.updateWrites - before.updateWrites,
    byOperation,
  };
}

/** Whether the endpoint exports the series the cost figures need (else the figures say so). */
export function hasCostSeries(samples: Sample[]): boolean {
  return (
    samples.some((sample) => isNamed(sample.name, 'service_requests')) &&
    samples.some((sample) => isNamed(sample.name, 'persistence_requests'))
  );
}

/**
 * The server's `action` counter (what Temporal Cloud bills: starts, signals, activities, timers,
 * updates, heartbeats...), for one namespace, by `action_type`.
 */
export function actionCounts(samples: Sample[], namespace: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const sample of samples) {
    if (!isNamed(sample.name, 'action') || sample.labels.namespace !== namespace) continue;
    const type = sample.labels.action_type ?? '?';
    counts.set(type, (counts.get(type) ?? 0) + sample.value);
  }
  return counts;
}

/** The actions counted between two readings of `actionCounts`: their total and, by type, what grew. */
export function actionsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
): { total: number; byType: Record<string, number> } {
  const byType: Record<string, number> = {};
  let total = 0;
  for (const [type, value] of after) {
    const delta = value - (before.get(type) ?? 0);
    if (delta === 0) continue;
    byType[type] = delta;
    total += delta;
  }
  return { total, byType };
}

/** What some work cost the server in actions: in all, and by type. */
export type ActionCost = { total: number; byType: Record<string, number> };

/**
 * Counts the actions `body` causes on a server whose metrics are at `metricsUrl`, once the server
 * has settled after it (`settleMs`: what follows from the work, such as a workflow's last task).
 */
export async function actionsOf(
  server: { metricsUrl: string; namespace: string },
  body: () => Promise<unknown>,
  settleMs: number,
): Promise<ActionCost> {
  const read = async () => actionCounts(await scrape(server.metricsUrl), server.namespace);
  const before = await read();
  await body();
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return actionsBetween(before, await read());
}

/** Actions by type, as a figure shows them: `ScheduleActivityTask 1, StartTimer 1`; `none`. */
export const actionTypes = (byType: Record<string, number>): string =>
  Object.entries(byType)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, count]) => `${type.replace(/^(grpc|command)_/, '')} ${count}`)
    .join(', ') || 'none';
