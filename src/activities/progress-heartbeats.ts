import fs from 'node:fs/promises';
import type { Context } from '@temporalio/activity';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TAIL_BYTES, IDLE_HEARTBEAT_INTERVAL_MS } from '../shared/limits.js';
import type { CommandProgress } from '../shared/task.js';
import { streamTail } from './spill-files.js';

export interface ProgressSource {
  pid: number;
  startedAtMs: number;
  host: string;
  files: { stdout: string; stderr: string };
}

/**
 * Heartbeats a running command's progress: within HEARTBEAT_INTERVAL_MS of its output growing
 * (checked by file size alone), else the same details every IDLE_HEARTBEAT_INTERVAL_MS. An idle
 * task then costs two stats a tick and a small heartbeat now and then, not reads and encodes; the
 * idle heartbeats still carry a kill (cancellation arrives only in a heartbeat's response).
 */
export async function startProgressHeartbeats(context: Context, source: ProgressSource): Promise<() => void> {
  const read = async (): Promise<CommandProgress> => {
    const [stdout, stderr] = await Promise.all([
      streamTail(source.files.stdout, HEARTBEAT_TAIL_BYTES, true),
      streamTail(source.files.stderr, HEARTBEAT_TAIL_BYTES, true),
    ]);
    return { pid: source.pid, startedAtMs: source.startedAtMs, host: source.host, stdout, stderr };
  };
  let last = await read();
  let sentAtMs = Date.now();
  context.heartbeat(last);

  let ticking = false;
  const tick = async () => {
    const [stdoutBytes, stderrBytes] = await Promise.all([
      fs.stat(source.files.stdout).then((stat) => stat.size),
      fs.stat(source.files.stderr).then((stat) => stat.size),
    ]);
    const grew = stdoutBytes !== last.stdout.bytes || stderrBytes !== last.stderr.bytes;
    if (!grew && Date.now() - sentAtMs < IDLE_HEARTBEAT_INTERVAL_MS) return;
    if (grew) last = await read();
    sentAtMs = Date.now();
    context.heartbeat(last);
  };
  const timer = setInterval(() => {
    if (ticking) return; // A slow disk: let the previous tick finish.
    ticking = true;
    tick()
      .catch(() => undefined) // A failed stat or read is retried on the next tick.
      .finally(() => {
        ticking = false;
      });
  }, HEARTBEAT_INTERVAL_MS);
  return () => clearInterval(timer);
}
