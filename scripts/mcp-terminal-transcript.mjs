#!/usr/bin/env node
/**
 * A terminal session through `durable-bash mcp`, driven with the MCP SDK's own client: vim on a
 * terminal task, keys typed into it, its worker SIGKILLed and started again, the same screen read
 * from the new one, then :wq. Prints each request and the text it got back (docs/TERMINALS.md).
 * The script runs its own worker (on a queue of its own), so it can kill it.
 *
 *   npm start                                              # terminal 1: Temporal (+ a worker)
 *   node scripts/mcp-terminal-transcript.mjs [address]     # terminal 2 (default 127.0.0.1:7233)
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, connectMcp, MAIN, resultText } from './mcp-transcript-client.mjs';

const address = process.argv[2] ?? '127.0.0.1:7233';
const id = randomUUID().slice(0, 8);
const taskQueue = `terminal-transcript-${id}`;
const hostId = `transcript-host-${id}`;
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-transcript-spill-'));
const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-transcript-work-'));

/** A worker of this script's queue, resolved once it polls. */
function startWorker() {
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'worker',
      '--address',
      address,
      '--task-queue',
      taskQueue,
      '--host-id',
      hostId,
      '--spill-dir',
      spillDir,
      '--workdir',
      workdir,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let banner = '';
    child.stderr.on('data', (chunk) => {
      banner += chunk;
      if (banner.includes('worker polling')) resolve(child);
    });
    child.once('exit', () => reject(new Error(`worker exited: ${banner}`)));
  });
}

/** Reads until the screen matches `until` (each read waits up to 2 s for a change); prints the last. */
async function screenUntil(client, taskId, until) {
  for (let tries = 0; tries < 30; tries++) {
    const result = await client.callTool({
      name: 'bash_output',
      arguments: { task_id: taskId, wait_ms: 2000 },
    });
    const text = resultText(result);
    if (until.test(text)) {
      console.log(`-> tools/call bash_output ${JSON.stringify({ task_id: taskId, wait_ms: 2000 })}`);
      console.log(`<- ${text.replaceAll('\n', '\n   ')}\n`);
      return text;
    }
  }
  throw new Error(`the screen never matched ${until}`);
}

let worker = await startWorker();
const client = await connectMcp('terminal-transcript', [
  '--address',
  address,
  '--task-queue',
  taskQueue,
  '--session',
  `transcript-${id}`,
  '--cwd',
  workdir,
]);
try {
  const started = await call(client, 'bash', {
    command: 'vim -u NONE -N -i NONE -n notes.txt',
    description: 'Edit notes in vim',
    run_in_background: true,
    tty: true,
    cols: 50,
    rows: 8,
  });
  const taskId = /(bash-[0-9a-f-]{36})/.exec(started)?.[1];
  await screenUntil(client, taskId, /"notes\.txt"/);
  await call(client, 'bash_input', { task_id: taskId, text: 'ihello terminal', keys: ['Enter'] });
  await call(client, 'bash_input', { task_id: taskId, text: 'second line', keys: ['Escape', 'Up', 'Home'] });
  const before = await screenUntil(client, taskId, /cursor at row 1, column 1\]/);

  console.log(`(the task's worker, pid ${worker.pid}, is SIGKILLed; a new worker starts on the same host)\n`);
  worker.kill('SIGKILL');
  worker = await startWorker();
  const after = await call(client, 'bash_output', { task_id: taskId });
  console.log(
    `(the screen after the restart is ${after === before ? 'the same' : 'NOT the same'} as before it)\n`,
  );

  await call(client, 'bash_input', { task_id: taskId, text: ':wq', keys: ['Enter'] });
  await screenUntil(client, taskId, /\[status: completed/);
  console.log(`$ cat notes.txt\n${readFileSync(path.join(workdir, 'notes.txt'), 'utf8')}`);
} finally {
  await client.close();
  worker.kill('SIGTERM');
}
