/**
 * A durable-bash session as AI SDK 7's sandbox: `generateText` gets it as `experimental_sandbox`,
 * and a tool spawns a command in it and streams its output as the command prints it. Every command
 * is a durable task, so it would outlive this process, a worker crash and a server restart.
 *
 * Run it with a server and a worker up (`npx durable-bash dev` in another terminal), after
 * `npm run build`, on Node.js 22 or later:
 *   AI_GATEWAY_API_KEY=... node examples/ai-sdk-sandbox.mjs   # a real model, through the AI Gateway
 *   DURABLE_BASH_EXAMPLE_MODEL=mock node examples/ai-sdk-sandbox.mjs   # ai/test's mock model, offline
 * The server comes from TEMPORAL_ADDRESS (as the CLI finds it), the worker's task queue from
 * DURABLE_BASH_TASK_QUEUE (default `durable-bash`, the one `durable-bash dev` serves), a real
 * model's id from AI_MODEL (default `openai/gpt-5-mini`).
 */

import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { connectClient } from 'durable-bash';
import { createDurableBashSandbox } from 'durable-bash/ai-sdk';

const COMMAND = 'for i in 1 2 3; do echo "tick $i"; sleep 0.5; done; echo done >&2';

/** The model: ai/test's mock when asked for, else a gateway model id (AI SDK 7 resolves a string through the AI Gateway). */
function chooseModel() {
  if (process.env.DURABLE_BASH_EXAMPLE_MODEL === 'mock') return mockModel();
  if (process.env.AI_GATEWAY_API_KEY) return process.env.AI_MODEL ?? 'openai/gpt-5-mini';
  console.error(
    'set AI_GATEWAY_API_KEY for a real model, or DURABLE_BASH_EXAMPLE_MODEL=mock for the mock one',
  );
  process.exit(2);
}

const decoder = new TextDecoder();

/** A tool over the call's sandbox: spawns the command and prints each chunk the moment it arrives. */
const watch = tool({
  description: 'Runs a shell command in the sandbox, streaming its output; returns the output and exit code.',
  inputSchema: jsonSchema({
    type: 'object',
    properties: { command: { type: 'string', description: 'the shell command' } },
    required: ['command'],
  }),
  async execute({ command }, { experimental_sandbox: sandbox }) {
    const child = await sandbox.spawn({ command });
    let stdout = '';
    for await (const chunk of child.stdout) {
      const text = decoder.decode(chunk, { stream: true });
      stdout += text;
      process.stdout.write(text.replace(/^(?=.)/gm, 'streamed> '));
    }
    let stderr = '';
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
    const { exitCode } = await child.wait();
    return { stdout, stderr, exitCode };
  },
});

const model = chooseModel();
const client = await connectClient();
try {
  const sandbox = await createDurableBashSandbox({
    client,
    taskQueue: process.env.DURABLE_BASH_TASK_QUEUE ?? 'durable-bash',
  });
  console.log(`sandbox: session ${sandbox.sessionId}, workspace ${sandbox.root}`);
  const result = await generateText({
    model,
    system: sandbox.description,
    prompt: `Run \`${COMMAND}\` with the watch tool and say what it printed and how it ended.`,
    tools: { watch },
    stopWhen: stepCountIs(3),
    experimental_sandbox: sandbox,
  });
  for (const step of result.steps)
    for (const toolResult of step.toolResults)
      console.log(`tool result: ${JSON.stringify(toolResult.output)}`);
  console.log(`answer: ${result.text}`);
} finally {
  await client.connection.close();
}

/** Calls `watch` with COMMAND, then answers with what the tool returned. */
function mockModel() {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  return new MockLanguageModelV3({
    async doGenerate({ prompt }) {
      const last = prompt.at(-1);
      if (last?.role === 'tool') {
        const { output } = last.content.find((part) => part.type === 'tool-result');
        const { stdout, exitCode } = output.value;
        const text = `it printed ${stdout.split('\n').filter(Boolean).length} lines and exited with ${exitCode}`;
        return { content: [{ type: 'text', text }], finishReason: { unified: 'stop' }, usage, warnings: [] };
      }
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call-1',
            toolName: 'watch',
            input: JSON.stringify({ command: COMMAND }),
          },
        ],
        finishReason: { unified: 'tool-calls' },
        usage,
        warnings: [],
      };
    },
  });
}
