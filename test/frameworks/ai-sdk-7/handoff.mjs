// A process of its own for the handoff test (sandbox.test.ts; the worker is SIGKILLed and the
// server restarted between the two): `first` deserializes the sandbox,
// spawns the command, reads stdout until it holds `until`, and prints what it read and the
// process handle serialized; `second` deserializes that handle and reads both streams to the end.
// Each finds its Temporal client as the CLI does (TEMPORAL_ADDRESS), registering none.
import { readFileSync } from 'node:fs';
import {
  DurableBashProcess,
  DurableBashSandbox,
  WORKFLOW_DESERIALIZE,
  WORKFLOW_SERIALIZE,
} from '../../../dist/ai-sdk/index.js';

const [role, input, until] = process.argv.slice(2);
const data = JSON.parse(readFileSync(input, 'utf8'));
const decoder = new TextDecoder();

async function readAll(stream) {
  let text = '';
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text;
}

if (role === 'first') {
  const sandbox = DurableBashSandbox[WORKFLOW_DESERIALIZE](data.sandbox);
  const child = await sandbox.spawn({ command: data.command });
  const reader = child.stdout.getReader();
  let consumed = '';
  while (!consumed.includes(until)) {
    const { value, done } = await reader.read();
    if (done) break;
    consumed += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  const handle = DurableBashProcess[WORKFLOW_SERIALIZE](child);
  // Exits once the pipe took it all (a large write to a pipe completes later).
  process.stdout.write(JSON.stringify({ consumed, handle }), () => process.exit(0));
} else {
  const child = DurableBashProcess[WORKFLOW_DESERIALIZE](data);
  const [stdout, stderr] = await Promise.all([readAll(child.stdout), readAll(child.stderr)]);
  const { exitCode } = await child.wait();
  process.stdout.write(JSON.stringify({ stdout, stderr, exitCode }), () => process.exit(0));
}
