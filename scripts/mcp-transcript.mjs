#!/usr/bin/env node
/**
 * Drives `durable-bash mcp` over stdio with the MCP SDK's own client, the way an agent would, and
 * prints each request and the text it got back: docs/MCP.md's transcript comes from here.
 *
 *   npm start                                     # terminal 1: Temporal + a worker
 *   node scripts/mcp-transcript.mjs [address]     # terminal 2 (default 127.0.0.1:7233)
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const address = process.argv[2] ?? '127.0.0.1:7233';
const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const session = `transcript-${randomUUID().slice(0, 8)}`;

function connect() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, 'mcp', '--address', address, '--session', session],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'transcript', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) =>
    console.log(`<- notifications/message: ${String(notification.params.data).replaceAll('\n', '\n   ')}\n`),
  );
  return client.connect(transport).then(() => ({ client, close: () => client.close() }));
}

async function call(client, name, args) {
  console.log(`-> tools/call ${name} ${JSON.stringify(args)}`);
  const result = await client.callTool({ name, arguments: args });
  const text = result.content.map((block) => block.text).join('\n---\n');
  console.log(`<- ${result.isError ? '(isError) ' : ''}${text.replaceAll('\n', '\n   ')}\n`);
  return text;
}

const idOf = (text) => /(bash-[0-9a-f-]{36})/.exec(text)?.[1];

let first = await connect();
console.log(
  `-> tools/list\n<- ${(await first.client.listTools()).tools.map((tool) => tool.name).join(', ')}\n`,
);
await call(first.client, 'bash', {
  command: 'echo hello; echo oops >&2; exit 3',
  description: 'Print and fail',
});
const tests = idOf(
  await call(first.client, 'bash', {
    command: 'for i in 1 2 3; do echo "test $i passed"; sleep 1; done',
    description: 'Run the tests',
    run_in_background: true,
  }),
);
const repl = idOf(
  await call(first.client, 'bash', {
    command: 'while read -r line; do echo "= $((line))"; done',
    description: 'Start a calculator',
    run_in_background: true,
    keep_stdin_open: true,
  }),
);
await call(first.client, 'bash_input', { task_id: repl, text: '6*7\n' });
await call(first.client, 'bash_output', { task_id: repl, wait_ms: 5000 });
await call(first.client, 'bash_output', { task_id: tests, wait_ms: 5000, filter: 'passed' });
await call(first.client, 'bash_list', {});

console.log('(the MCP server process is stopped, and a new one started for the same session)\n');
await first.close();
first = await connect();
await call(first.client, 'bash_input', { task_id: repl, text: '2**10\n', close: true });
await call(first.client, 'bash_output', { task_id: repl, wait_ms: 5000 });
await call(first.client, 'bash_output', { task_id: tests, wait_ms: 10000 });
await new Promise((resolve) => setTimeout(resolve, 1500));
await call(first.client, 'bash', { command: 'echo next', description: 'Print next' });
await call(first.client, 'bash_kill', { task_id: repl });
await first.close();
