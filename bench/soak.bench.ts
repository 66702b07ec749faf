/**
 * The soak of DESIGN.md §4: start / read / kill cycles for BENCH_SOAK_MS (10 minutes from
 * `npm run bench:soak`), four at a time, sampling the RSS and the open file descriptors of the worker
 * process and of the agent host (this process) every 5 s. Targets: no fd growth and under 10 % RSS growth
 * over the last 5 minutes. Skipped unless bench/run.mjs runs it with BENCH_MODE=soak.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import type { WorkerProcess } from '../test/helpers/worker-process.js';
import { type Figure, fixed, mib, percentile, seconds } from './lib/figures.js';
import {
  endLeftovers,
  fdCountOf,
  rssBytesOf,
  sleep,
  startBackground,
  startWorker,
  type Tools,
  text,
} from './lib/host.js';
import { type BenchServer, type ServerKind, startBenchServer } from './lib/server.js';

const SOAK = process.env.BENCH_MODE === 'soak';
const SERVER = (process.env.BENCH_SERVER ?? 'memory') as ServerKind;
const OUT = process.env.BENCH_OUT;
const DURATION_MS = Number(process.env.BENCH_SOAK_MS ?? 10 * 60_000);
/** The judged stretch: the last 5 minutes (or the last half of a shorter soak). */
const TAIL_MS = Math.min(5 * 60_000, DURATION_MS / 2);
const SAMPLE_EVERY_MS = 5_000;
/** Tasks in flight at once: each lane starts one, reads it, kills it, and starts the next. */
const LANES = 4;

interface Point {
  atMs: number;
  cycles: number;
  workerRss: number;
  workerFds: number;
  hostRss: number;
  hostFds: number;
}

const began = performance.now();
const log = (message: string) =>
  console.log(`[soak ${SERVER} ${seconds(performance.now() - began).padStart(7)}] ${message}`);
const figures: Figure[] = [];
const points: Point[] = [];
let server: BenchServer;
let worker: WorkerProcess;
let dir: string;

beforeAll(async () => {
  if (!SOAK) return;
  server = await startBenchServer(SERVER);
  dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-soak-'));
}, 300_000);

afterAll(async () => {
  if (!SOAK) return;
  await worker?.crash();
  await server?.stop();
  endLeftovers(dir);
  rmSync(dir, { recursive: true, force: true });
  if (OUT)
    writeFileSync(
      OUT,
      `${JSON.stringify(
        {
          server: server && { kind: server.kind, description: server.description, version: server.version },
          mode: 'soak',
          durationMs: performance.now() - began,
          figures,
          notes: [],
          extra: { points },
        },
        null,
        2,
      )}\n`,
    );
}, 120_000);

describe.skipIf(!SOAK)('soak', () => {
  it(
    'start / read / kill cycles hold the worker and the agent host steady',
    async () => {
      const queue = `bench-soak-${randomUUID()}`;
      worker = await startWorker(server, queue, dir);
      const pid = worker.child.pid as number;
      const tools = Object.fromEntries(
        createBashTools({ client: server.client, taskQueue: queue }).map((tool) => [tool.name, tool]),
      ) as Tools;
      let cycles = 0;
      let errors = 0;
      const start = performance.now();
      const until = start + DURATION_MS;
      const lane = async () => {
        while (performance.now() < until) {
          try {
            const taskId = await startBackground(
              tools,
              'for i in 1 2 3; do echo "soak line $i"; sleep 0.2; done; sleep 600',
            );
            let seen = '';
            const deadline = Date.now() + 10_000;
            while (!seen.includes('soak line 3') && Date.now() < deadline)
              seen += text(await tools.bash_output.execute({ task_id: taskId, wait_ms: 2_000 }));
            const killed = text(await tools.bash_kill.execute({ task_id: taskId }));
            if (!seen.includes('soak line 3') || !killed.includes('killed')) errors++;
            cycles++;
          } catch (err) {
            errors++;
            log(`cycle failed: ${String(err).split('\n')[0]}`);
            await sleep(1_000);
          }
        }
      };
      const sample = () =>
        points.push({
          atMs: performance.now() - start,
          cycles,
          workerRss: rssBytesOf(pid),
          workerFds: fdCountOf(pid),
          hostRss: process.memoryUsage().rss,
          hostFds: fdCountOf('self'),
        });
      sample();
      const sampler = setInterval(() => {
        sample();
        const last = points.at(-1) as Point;
        if (points.length % 12 === 0)
          log(
            `${cycles} cycles; worker ${mib(last.workerRss)} ${last.workerFds} fds; host ${mib(last.hostRss)} ${last.hostFds} fds`,
          );
      }, SAMPLE_EVERY_MS);
      try {
        await Promise.all(Array.from({ length: LANES }, lane));
      } finally {
        clearInterval(sampler);
      }
      sample();
      const durationMs = performance.now() - start;

      // The judged stretch, against the minute that opens it: a minute's low fd count and median
      // RSS, so an fd or a buffer held by a call in flight at one sample does not count as growth.
      const tailStart = durationMs - TAIL_MS;
      const span = Math.min(60_000, TAIL_MS / 4);
      const opening = points.filter((p) => p.atMs >= tailStart && p.atMs < tailStart + span);
      const closing = points.filter((p) => p.atMs >= durationMs - span);
      const growth = (pick: (p: Point) => number) => {
        const low = (ps: Point[]) => Math.min(...ps.map(pick));
        const median = (ps: Point[]) => percentile(ps.map(pick), 50);
        return { fds: low(closing) - low(opening), rss: median(closing) / median(opening) - 1 };
      };
      const w = growth((p) => p.workerFds);
      const wr = growth((p) => p.workerRss);
      const h = growth((p) => p.hostFds);
      const hr = growth((p) => p.hostRss);
      const at = (p: Point | undefined, pick: (p: Point) => number, rss: boolean) =>
        p ? (rss ? mib(pick(p)) : String(pick(p))) : 'n/a';
      const first = points[0];
      const last = points.at(-1);
      const stretch = `over the last ${seconds(TAIL_MS)} of ${seconds(durationMs)} (${cycles} cycles, ${errors} failed, ${LANES} at a time)`;
      for (const [who, fds, rss, pickFds, pickRss] of [
        ['worker', w.fds, wr.rss, (p: Point) => p.workerFds, (p: Point) => p.workerRss],
        ['agent host (the bench process)', h.fds, hr.rss, (p: Point) => p.hostFds, (p: Point) => p.hostRss],
      ] as const) {
        figures.push(
          {
            id: `soak.${who.split(' ')[0]}.fds`,
            measure: `soak: open file descriptors of the ${who}`,
            raw: `growth ${fds} ${stretch}; ${at(first, pickFds, false)} at the start, ${at(last, pickFds, false)} at the end`,
            value: fds,
            unit: 'fds',
            ratio: null,
            ratioText: '',
            target: 'no growth',
            holds: fds <= 0,
          },
          {
            id: `soak.${who.split(' ')[0]}.rss`,
            measure: `soak: RSS of the ${who}`,
            raw: `growth ${fixed(rss * 100, 1)} % ${stretch}; ${at(first, pickRss, true)} at the start, ${at(last, pickRss, true)} at the end`,
            value: rss * 100,
            unit: '%',
            ratio: null,
            ratioText: '',
            target: '< 10 % growth',
            holds: rss < 0.1,
          },
        );
      }
      log(`done: ${cycles} cycles, ${errors} failed`);
      expect(errors).toBe(0);
    },
    DURATION_MS + 5 * 60_000,
  );
});
