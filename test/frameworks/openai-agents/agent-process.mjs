/**
 * An agent process for resume-run.test.ts: a SandboxAgent with the shell() capability, driven by
 * the SDK's ScriptedModel, on a DurableBashSandboxClient (the built package). `start` runs until
 * the run stops for approval of `write_stdin` (a line for the command's stdin) and writes the RunState to `stateFile`; `resume`
 * reads it in a fresh process, approves, and runs to the end. Prints what the model was given as
 * JSON on stdout. Node.js 24 (the SDK needs 22+).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { RunState, run } from '@openai/agents-core';
import { SandboxAgent, shell } from '@openai/agents-core/sandbox';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { Client, Connection } from '@temporalio/client';
import { DurableBashSandboxClient } from '../../../dist/openai-agents/index.js';

const [mode, address, taskQueue, stateFile, command] = process.argv.slice(2);
const connection = await Connection.connect({ address });
const sandboxClient = new DurableBashSandboxClient({ client: new Client({ connection }), taskQueue });

const model = new ScriptedModel(
  mode === 'start'
    ? [
        [functionCall('exec_command', { cmd: command, yield_time_ms: 1_500 }, { callId: 'call-exec' })],
        [
          functionCall(
            'write_stdin',
            { session_id: 1, chars: 'hello\n', yield_time_ms: 30_000 },
            { callId: 'call-write' },
          ),
        ],
      ]
    : [[assistantMessage('done')]],
);
// write_stdin asks for approval: the run stops there, as a run waiting for a human does.
const askBeforeWriting = (tools) =>
  tools.map((tool) => (tool.name === 'write_stdin' ? { ...tool, needsApproval: async () => true } : tool));
const agent = new SandboxAgent({
  name: 'builder',
  instructions: 'Build the project.',
  model,
  capabilities: [shell({ configureTools: askBeforeWriting })],
});

let result;
if (mode === 'start') {
  result = await run(agent, 'build it', { sandbox: { client: sandboxClient } });
  writeFileSync(stateFile, result.state.toString());
} else {
  const state = await RunState.fromString(agent, readFileSync(stateFile, 'utf8'));
  for (const interruption of state.getInterruptions()) state.approve(interruption);
  result = await run(agent, state, { sandbox: { client: sandboxClient } });
}

/** The tool outputs each model call was given, by call id. */
const toolOutputs = model.calls.flatMap((call) =>
  (Array.isArray(call.request.input) ? call.request.input : [])
    .filter((item) => item.type === 'function_call_result')
    .map((item) => ({
      callId: item.callId,
      text: typeof item.output === 'string' ? item.output : item.output?.text,
    })),
);
process.stdout.write(
  JSON.stringify({
    interruptions: result.interruptions?.map((item) => item.rawItem.name) ?? [],
    finalOutput: result.finalOutput ?? null,
    toolOutputs,
  }),
);
await connection.close();
