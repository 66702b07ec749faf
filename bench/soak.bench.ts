/**
 * The soak of DESIGN.md §4: start / read / kill cycles for BENCH_SOAK_MS (10 minutes from
 * `npm run bench:soak`), four at a time, sampling the RSS and the open file descriptors of the worker
 * process and of the agent host (this process) every 5 s. Targets: no fd growth and under 10 % RSS growth
 * over the last 5 minutes. Skipped unless bench/run.mjs runs it with BENCH_MODE=soak.
 *
 * Fds are judged at rest: a sample taken while cycles run counts the pipes, pidfds and files of the
 * commands in flight (it swings by 20 from one sample to the next), so the cycles pause four times
 * (halfway to the judged stretch, at its start, halfway through it, at its end). The counts at the
 * start and the end of the judged stretch are compared kind by kind (a socket by its peer), so a
 * leak names what leaks, and the four together tell a leak (it climbs) from a connection opened late.
 * A rest waits (up to 80 s) for a second connection to the server to close: the server rotates
 * each connection every 5 minutes, and the old one drains for up to 70 s.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../src/tools/create-bash-tools.js';
import type { WorkerProcess } from '../test/helpers/worker-process.js';
import { type Figure, fixed, mib, percentile, seconds, writeRunJson } from './lib/figures.js';
import {
  endLeftovers,
  fdCountOf,
  fdKindsOf,
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
/** The server's `frontend.keepAliveMaxConnectionAgeGrace` (70 s), and a little more. */
const ROTATION_GRACE_MS = 80_000;
/** More than one connection to one server address: a connection the server rotates is draining. */
const rotating = (kinds: Map<string, number>) =>
  [...kinds].some(([kind, n]) => kind.startsWith('socket tcp to') && n > 1);
/** Quiet before a count at rest: the last kills' activities and supervisors' exits settle. */
const SETTLE_MS = 5_000;

interface Point {
  atMs: number;
  cycles: number;
  workerRss: number;
  workerFds: number;
  hostRss: number;
  hostFds: number;
}

/** Open fds by kind (`fdKindsOf`) of the worker and of the agent host, with no cycle in flight. */
interface Rest {
  atMs: number;
  cycles: number;
  worker: Map<string, number>;
  host: Map<string, number>;
}

const total = (kinds: Map<string, number>) => [...kinds.values()].reduce((a, b) => a + b, 0);
const kindsText = (kinds: Map<string, number>) =>
  [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
/** The kinds whose count differs, as `+1 socket, -2 pipe`; empty when none does. */
function kindsChange(before: Map<string, number>, after: Map<string, number>): string {
  return [...new Set([...before.keys(), ...after.keys()])]
    .map((kind) => [kind, (after.get(kind) ?? 0) - (before.get(kind) ?? 0)] as const)
    .filter(([, n]) => n !== 0)
    .map(([kind, n]) => `${n > 0 ? '+' : ''}${n} ${kind}`)
    .join(', ');
}

const began = performance.now();
const log = (message: string) =>
  console.log(`[soak ${SERVER} ${seconds(performance.now() - began).padStart(7)}] ${message}`);
const figures: Figure[] = [];
const points: Point[] = [];
const rests: Rest[] = [];
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
  writeRunJson(OUT, {
    server: server && { kind: server.kind, description: server.description, version: server.version },
    mode: 'soak',
    durationMs: performance.now() - began,
    figures,
    notes: [],
    extra: {
      points,
      rests: rests.map((rest) => ({
        ...rest,
        worker: Object.fromEntries(rest.worker),
        host: Object.fromEntries(rest.host),
      })),
    },
  });
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
      const lane = async (until: number) => {
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
      // The lowest of three counts 1 s apart: a poll or a gRPC stream may hold a socket for a moment.
      const atRest = async (): Promise<Rest> => {
        await sleep(SETTLE_MS);
        // The server closes each connection at 5 minutes (+-10 %) with a GOAWAY, and the client
        // opens the next at once; the old one drains its long polls for up to 70 s. A second
        // connection to the server at rest is that, when it closes within the grace.
        const rotationStarted = performance.now();
        while (rotating(fdKindsOf(pid)) && performance.now() - rotationStarted < ROTATION_GRACE_MS)
          await sleep(1_000);
        const waitedMs = rotating(fdKindsOf(pid)) ? undefined : performance.now() - rotationStarted;
        if (waitedMs !== undefined && waitedMs > 1_500)
          log(`waited ${seconds(waitedMs)} for a connection the server rotated to close`);
        const rest: Rest = {
          atMs: performance.now() - start,
          cycles,
          worker: fdKindsOf(pid),
          host: fdKindsOf('self'),
        };
        for (let i = 0; i < 2; i++) {
          await sleep(1_000);
          const worker = fdKindsOf(pid);
          const host = fdKindsOf('self');
          if (total(worker) < total(rest.worker)) rest.worker = worker;
          if (total(host) < total(rest.host)) rest.host = host;
        }
        log(`at rest after ${cycles} cycles: worker ${total(rest.worker)} fds, host ${total(rest.host)} fds`);
        return rest;
      };
      const runLanes = (until: number) => Promise.all(Array.from({ length: LANES }, () => lane(until)));
      let tailStart: number;
      let opened: Rest;
      let closed: Rest;
      try {
        // Rests halfway to the judged stretch, at its start, halfway through it and at its end:
        // counts that climb from one to the next are a leak; a one-off is a connection opened late.
        await runLanes(start + (DURATION_MS - TAIL_MS) / 2);
        rests.push(await atRest());
        await runLanes(start + DURATION_MS - TAIL_MS);
        opened = await atRest();
        rests.push(opened);
        tailStart = performance.now() - start;
        await runLanes(performance.now() + TAIL_MS / 2);
        rests.push(await atRest());
        await runLanes(performance.now() + TAIL_MS / 2);
        closed = await atRest();
        rests.push(closed);
      } finally {
        clearInterval(sampler);
      }
      sample();
      const durationMs = performance.now() - start;

      // RSS over the judged stretch, against the minute that opens it: a minute's median, so a buffer
      // held by a call in flight at one sample does not count as growth.
      const span = Math.min(60_000, TAIL_MS / 4);
      const tailEnd = closed.atMs;
      const opening = points.filter((p) => p.atMs >= tailStart && p.atMs < tailStart + span);
      const closing = points.filter((p) => p.atMs >= tailEnd - span && p.atMs < tailEnd);
      const rssGrowth = (pick: (p: Point) => number) => {
        const median = (ps: Point[]) => percentile(ps.map(pick), 50);
        return median(closing) / median(opening) - 1;
      };
      const inFlight = (pick: (p: Point) => number) => {
        const counts = points.map(pick).filter((n) => !Number.isNaN(n));
        return `${Math.min(...counts)} to ${Math.max(...counts)} while cycles ran`;
      };
      const at = (p: Point | undefined, pick: (p: Point) => number) => (p ? mib(pick(p)) : 'n/a');
      const restsText = (who: 'worker' | 'host') =>
        rests.map((rest) => `${total(rest[who])} after ${rest.cycles} cycles`).join(', ');
      const first = points[0];
      const last = points.at(-1);
      const stretch = `over the last ${seconds(tailEnd - tailStart)} of ${seconds(durationMs)} (${cycles} cycles, ${errors} failed, ${LANES} at a time)`;
      const processes = [
        {
          key: 'worker',
          id: 'worker',
          who: 'worker',
          fds: (p: Point) => p.workerFds,
          rss: (p: Point) => p.workerRss,
        },
        {
          key: 'host',
          id: 'agent',
          who: 'agent host (the bench process)',
          fds: (p: Point) => p.hostFds,
          rss: (p: Point) => p.hostRss,
        },
      ] as const;
      for (const { key, id, who, fds: pickFds, rss: pickRss } of processes) {
        const before = opened[key];
        const after = closed[key];
        const rss = rssGrowth(pickRss);
        const fds = total(after) - total(before);
        const change = kindsChange(before, after);
        figures.push(
          {
            id: `soak.${id}.fds`,
            measure: `soak: open file descriptors of the ${who}, at rest`,
            raw:
              `growth ${fds} ${stretch}; at rest ${restsText(key)}` +
              `${change ? ` (${change})` : ''}; ${inFlight(pickFds)}; at the end: ${kindsText(after)}`,
            value: fds,
            unit: 'fds',
            ratio: null,
            ratioText: '',
            target: 'no growth',
            holds: !/(^|, )\+/.test(change),
          },
          {
            id: `soak.${id}.rss`,
            measure: `soak: RSS of the ${who}`,
            raw: `growth ${fixed(rss * 100, 1)} % ${stretch}; ${at(first, pickRss)} at the start, ${at(last, pickRss)} at the end`,
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
