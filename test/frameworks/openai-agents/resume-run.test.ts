import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../../src/dev-server/dev-server.js';
import { startDevServerOnFile } from '../../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';

const run = promisify(execFile);
const AGENT = path.resolve('test/frameworks/openai-agents/agent-process.mjs');
const hostId = `oa-run-host-${process.pid}`;
const taskQueue = `test-openai-agents-run-${process.pid}`;
const workers: WorkerProcess[] = [];
let server: DevServer | undefined;

afterAll(async () => {
  for (const worker of workers) await worker.crash();
  await server?.stop();
});

/**
 * The dev server `durable-bash dev` runs, on a database file: killed, it starts again on the same
 * file and ports with everything it held.
 */
async function startServer(place: { port?: number; uiPort?: number; dbFile: string }): Promise<DevServer> {
  server = await startDevServerOnFile(place);
  return server;
}

interface AgentReport {
  interruptions: string[];
  finalOutput: string | null;
  toolOutputs: Array<{ callId: string; text: string }>;
}

/** One agent process (Node.js 24, as this test runs), to its end; what its model was given. */
async function agentProcess(mode: 'start' | 'resume', stateFile: string, command = ''): Promise<AgentReport> {
  const address = server?.address ?? '';
  const { stdout } = await run(process.execPath, [AGENT, mode, address, taskQueue, stateFile, command], {
    timeout: 90_000,
  });
  return JSON.parse(stdout) as AgentReport;
}

const startWorker = (spillDir: string) =>
  startWorkerProcess({ address: server?.address ?? '' }, taskQueue, [
    '--host-id',
    hostId,
    '--spill-dir',
    spillDir,
  ]).then((worker) => {
    workers.push(worker);
    return worker;
  });

describe('a SandboxAgent run on durable-bash, resumed in a new process', () => {
  it("types into a command's stdin, and gets its output once and its exact exit code after the agent process ended, the worker was SIGKILLed and the Temporal server restarted", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-oa-run-'));
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-oa-run-spill-'));
    const stateFile = path.join(dir, 'run-state.json');
    const { place } = await startServer({ dbFile: path.join(dir, 'temporal.db') });
    const first = await startWorker(spillDir);

    const started = await agentProcess(
      'start',
      stateFile,
      // The line write_stdin sends after every restart reaches the command's stdin (no terminal).
      'echo first; sleep 6; read -r line; echo "second $line"; exit 7',
    );
    expect(started.interruptions).toEqual(['write_stdin']);
    const exec = started.toolOutputs.find((output) => output.callId === 'call-exec')?.text ?? '';
    expect(exec).toMatch(/\nProcess running with session ID 1\nOutput:\nfirst\n$/);

    // The agent process has ended; now the worker and the server die, and start again.
    await first.crash();
    server?.process.kill('SIGKILL');
    await server?.exited;
    await startServer(place);
    await startWorker(spillDir);

    const resumed = await agentProcess('resume', stateFile);
    expect(resumed.finalOutput).toBe('done');
    const written = resumed.toolOutputs.find((output) => output.callId === 'call-write')?.text ?? '';
    expect(written).toMatch(/\nProcess exited with code 7\nOutput:\nsecond hello\n$/);
    // Each tool result once (a later model call is given the earlier ones again, as history).
    const results = new Map(
      [...started.toolOutputs, ...resumed.toolOutputs].map((output) => [output.callId, output.text]),
    );
    expect([...results.keys()].sort()).toEqual(['call-exec', 'call-write']);
    const everything = [...results.values()].join('\n');
    expect(everything.match(/^first$/gm)).toHaveLength(1);
    expect(everything.match(/^second hello$/gm)).toHaveLength(1);
  }, 180_000);
});
