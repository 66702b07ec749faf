/**
 * What a benchmark run reports: figures, each with its raw numbers, its ratio to the floor measured
 * in the same run, its target (DESIGN.md §4) and whether it holds. bench/run.mjs reads them from the
 * JSON each server's run writes (BENCH_OUT), merges them, and renders BENCHMARKS.md.
 */
import { writeFileSync } from 'node:fs';

export interface Figure {
  /** Stable key across runs (no sample counts in it): what --compare and the baseline match on. */
  id: string;
  measure: string;
  /** The raw numbers: percentiles in ms, counts, bytes. */
  raw: string;
  /** The figure's main number, in `unit`. */
  value: number;
  unit: string;
  /**
   * The figure against its floor: the k of `spawn + k x floor` for a latency, a multiple of the
   * floor for a scale or cost figure, a multiple of the target where there is no floor. The
   * gross-regression gate compares this number. `null` when it cannot be had (a floor of 0).
   */
  ratio: number | null;
  /** How `ratio` reads: `spawn + 1.23 x floor`, `1.10 x burst floor`, `0.42 x target`. */
  ratioText: string;
  target: string;
  holds: boolean | null;
  /**
   * Gated in quick mode when set: the run fails if `ratio > 2 x baseline + gateSlack` (the slack
   * keeps a figure near 0 from flaking on noise).
   */
  gateSlack?: number;
  /** What the gate compares: `ratio` (the default) or `value` (for a floor that may be 0). */
  gateOn?: 'ratio' | 'value';
  /**
   * Gated exactly (a count that is not noisy, such as the server's actions): the run fails if the
   * compared number is above the baseline's at all, so a change that adds one updates the baseline
   * in the same commit, with its reason.
   */
  gateExact?: boolean;
}

/** What one bench file's run writes to BENCH_OUT: the shape bench/run.mjs merges and report.mjs renders. */
export interface RunJson {
  server: { kind: string; description: string; version: string } | undefined;
  mode: 'quick' | 'full' | 'soak';
  sizes?: Record<string, number>;
  durationMs: number;
  figures: Figure[];
  notes: string[];
  extra?: Record<string, unknown>;
}

/** The server a run's JSON names: its kind, what it is (with what the run measured on it), its version. */
export function runServer(
  server: { kind: string; description: string; version: string } | undefined,
  measured?: string,
): RunJson['server'] {
  return (
    server && {
      kind: server.kind,
      description: measured === undefined ? server.description : `${server.description}, ${measured}`,
      version: server.version,
    }
  );
}

/** Writes a run's JSON to `out` (BENCH_OUT), when the bench was given one. */
export function writeRunJson(out: string | undefined, run: RunJson): void {
  if (out) writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
}

export interface Dist {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function dist(values: number[]): Dist {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : Number.NaN,
  };
}

export const ms = (value: number) => `${value.toFixed(1)} ms`;
export const seconds = (valueMs: number) => `${(valueMs / 1000).toFixed(1)} s`;
export const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
export const fixed = (value: number | null, digits = 2) =>
  value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);

export function rawDist(d: Dist, what = 'samples'): string {
  return `p50 ${ms(d.p50)}, p95 ${ms(d.p95)}, p99 ${ms(d.p99)}, max ${ms(d.max)} (${d.n} ${what})`;
}

/** The floors every latency is put against, measured in the same run on the same server. */
export interface LatencyFloors {
  spawn: Dist;
  floor: Dist;
}

export type Pct = 'p50' | 'p95' | 'p99';

/** k of `spawn + k x floor` at a percentile: (x - spawn) / floor, each at that percentile. */
export function kOf(floors: LatencyFloors, pct: Pct, value: number): number | null {
  const floor = floors.floor[pct];
  return floor > 0 ? (value - floors.spawn[pct]) / floor : null;
}

export const kText = (k: number | null, pct: Pct) => `${pct}: spawn + ${fixed(k)} x floor`;

/** A latency figure at one percentile, put against the floors. */
export function latencyFigure(
  floors: LatencyFloors,
  options: {
    id: string;
    measure: string;
    d: Dist;
    pct: Pct;
    target: string;
    holds: boolean | null;
    gateSlack?: number;
    what?: string;
  },
): Figure {
  const value = options.d[options.pct];
  const k = kOf(floors, options.pct, value);
  return {
    id: options.id,
    measure: options.measure,
    raw: rawDist(options.d, options.what),
    value,
    unit: 'ms',
    ratio: k,
    ratioText: kText(k, options.pct),
    target: options.target,
    holds: options.holds,
    ...(options.gateSlack !== undefined ? { gateSlack: options.gateSlack } : {}),
  };
}

export const ratioOr = (value: number, floor: number) => (floor > 0 ? value / floor : null);
