/**
 * A SandboxAgent (OpenAI Agents SDK) whose shell is a durable-bash session: every command the model
 * runs is a Temporal workflow on a worker of the task queue. Node.js 22 or later, after `npm run build`.
 *
 *   npx durable-bash dev                                  # a Temporal dev server and a worker
 *   OPENAI_API_KEY=... node examples/openai-agents-sandbox.mjs   # needs `npm install @openai/agents`
 *
 * With DURABLE_BASH_EXAMPLE_MODEL=scripted, the SDK's ScriptedModel stands in for the real model
 * (no key, no network; the tests run it so). TEMPORAL_ADDRESS and DURABLE_BASH_TASK_QUEUE say where
 * to connect (defaults: localhost:7233, durable-bash: what `durable-bash dev` serves).
 */
import { run } from '@openai/agents-core';
import { SandboxAgent, shell } from '@openai/agents-core/sandbox';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { Client, Connection } from '@temporalio/client';
import { DurableBashSandboxClient } from 'durable-bash/openai-agents';

const scripted = process.env.DURABLE_BASH_EXAMPLE_MODEL === 'scripted';
// @openai/agents registers the OpenAI models as the SDK's default provider.
if (!scripted) await import('@openai/agents');
const model = scripted
  ? new ScriptedModel([
      [functionCall('exec_command', { cmd: 'echo durable; seq 3' }, { callId: 'call-1' })],
      [assistantMessage('It printed "durable" and counted to 3.')],
    ])
  : 'gpt-5.1';

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
const sandbox = new DurableBashSandboxClient({
  client: new Client({ connection }),
  taskQueue: process.env.DURABLE_BASH_TASK_QUEUE ?? 'durable-bash',
});
const agent = new SandboxAgent({
  name: 'shell user',
  instructions: 'Answer with what the commands printed.',
  model,
  capabilities: [shell()],
});

try {
  const result = await run(agent, 'Print the word durable, then count to 3.', {
    sandbox: { client: sandbox },
  });
  // What the model ran and what it was told, then its answer.
  for (const item of result.newItems) {
    if (item.type === 'tool_call_item') console.log(`$ ${JSON.parse(item.rawItem.arguments).cmd}`);
    if (item.type === 'tool_call_output_item') {
      const text = typeof item.output === 'string' ? item.output : item.output.text;
      // Leave out the frame's chunk id and wall time, which change from run to run.
      console.log(text.split('\n').slice(2).join('\n'));
    }
  }
  console.log(`agent: ${result.finalOutput}`);
} finally {
  await connection.close();
}
