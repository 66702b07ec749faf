/**
 * The chaos run's agent host: a separate OS process holding the three tools and the agent worker
 * that receives completion notices, as a real agent harness would. The chaos harness SIGKILLs and
 * restarts it; everything it must not forget lives in Temporal or in the notices file.
 *
 * Protocol (newline-delimited JSON): stdin carries requests `{id, tool, args, sessionId}`, stdout
 * carries `{ready: true}` once the tools and the agent worker are up, then one `{id, text, isError}`
 * per request, in whatever order the calls end. Nothing else is written to stdout.
 *
 * Usage: node agent-host.mjs <dist-dir> <address> <notices-file> <notice-window-ms>
 * (<dist-dir>: the run's copy of the built package, see dist-snapshot.mjs). The task queue is
 * `chaos` (its agent worker's `chaos-agent`) unless AGENT_HOST_TASK_QUEUE names another (the
 * partition test's agent host).
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';

const [dist, address, noticesFile, noticeWindowMs] = process.argv.slice(2);
if (!dist || !address || !noticesFile || !noticeWindowMs) {
  process.stderr.write('usage: agent-host.mjs <dist-dir> <address> <notices-file> <notice-window-ms>\n');
  process.exit(2);
}
const { createAgentWorker, createBashTools } = await import(pathToFileURL(path.join(dist, 'index.js')).href);

// The SDK logs through the console by default; stdout is the protocol, so its logs go to stderr.
Runtime.install({
  logger: new DefaultLogger('ERROR', (entry) => process.stderr.write(`[sdk] ${entry.message}\n`)),
  // Core's own log lines come through that logger too, instead of straight to stdout.
  telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
});

// How long one tool call may take here: a call that hangs (the server is down) still answers,
// so the harness never waits on a request forever.
const CALL_TIMEOUT_MS = 90_000;

const taskQueue = process.env.AGENT_HOST_TASK_QUEUE ?? 'chaos';
const agentTaskQueue = `${taskQueue}-agent`;

const connection = await Connection.connect({ address });
const client = new Client({ connection });
const nativeConnection = await NativeConnection.connect({ address });

const tools = Object.fromEntries(
  createBashTools({
    client,
    taskQueue,
    agentTaskQueue,
    noticeWindowMs: Number(noticeWindowMs),
  }).map((tool) => [tool.name, tool]),
);

const agentWorker = await createAgentWorker({
  connection: nativeConnection,
  taskQueue: agentTaskQueue,
  agents: {
    // Appended synchronously before returning true: a notice Temporal counts as delivered is on
    // disk. A SIGKILL between the append and the answer makes Temporal retry with the same
    // noticeId, which the harness drops as a repeat.
    inject: async (sessionId, content, { noticeId }) => {
      appendFileSync(noticesFile, `${JSON.stringify({ sessionId, content, noticeId, at: Date.now() })}\n`);
      return true;
    },
  },
});
const workerRun = agentWorker.run();
workerRun.catch((err) => {
  process.stderr.write(`agent worker failed: ${err?.stack ?? err}\n`);
  process.exit(1);
});

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function serve(request) {
  const tool = tools[request.tool];
  if (!tool) return { id: request.id, text: `no tool ${request.tool}`, isError: true };
  try {
    const result = await tool.execute(request.args, {
      agent: { sessionId: request.sessionId, cwd: process.env.CHAOS_WORKDIR ?? process.cwd() },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    return {
      id: request.id,
      text: result.content.map((block) => block.text).join(''),
      isError: result.isError === true,
    };
  } catch (err) {
    // The tools throw only on what they call bugs; the harness reports it as an error answer.
    return { id: request.id, text: `threw: ${err?.message ?? err}`, isError: true, threw: true };
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const request = JSON.parse(line);
  serve(request).then(send);
});
// The harness closing stdin means it is done with this host: shut down gracefully.
process.stdin.on('end', () => {
  agentWorker.shutdown();
  workerRun.finally(() => process.exit(0));
});

send({ ready: true });
