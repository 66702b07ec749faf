#!/usr/bin/env node
/**
 * Drives `durable-bash mcp` over stdio with the MCP SDK's own client, the way an agent would, and
 * prints each request and the text it got back: docs/MCP.md's transcript comes from here.
 *
 *   npm start                                     # terminal 1: Temporal + a worker
 *   node scripts/mcp-transcript.mjs [address]     # terminal 2 (default 127.0.0.1:7233)
 */
import { randomUUID } from 'node:crypto';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { call, connectMcp } from './mcp-transcript-client.mjs';

const address = process.argv[2] ?? '127.0.0.1:7233';
const session = `transcript-${randomUUID().slice(0, 8)}`;

/** A new `durable-bash mcp` process for the session, which prints every logging notification. */
const connect = () =>
  connectMcp('transcript', ['--address', address, '--session', session], (client) =>
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) =>
      console.log(
        `<- notifications/message: ${String(notification.params.data).replaceAll('\n', '\n   ')}\n`,
      ),
    ),
  );

const idOf = (text) => /(bash-[0-9a-f-]{36})/.exec(text)?.[1];

let client = await connect();
console.log(`-> tools/list\n<- ${(await client.listTools()).tools.map((tool) => tool.name).join(', ')}\n`);
await call(client, 'bash', {
  command: 'echo hello; echo oops >&2; exit 3',
  description: 'Print and fail',
});
const tests = idOf(
  await call(client, 'bash', {
    command: 'for i in 1 2 3; do echo "test $i passed"; sleep 1; done',
    description: 'Run the tests',
    run_in_background: true,
  }),
);
const repl = idOf(
  await call(client, 'bash', {
    command: 'while read -r line; do echo "= $((line))"; done',
    description: 'Start a calculator',
    run_in_background: true,
    keep_stdin_open: true,
  }),
);
await call(client, 'bash_input', { task_id: repl, text: '6*7\n' });
await call(client, 'bash_output', { task_id: repl, wait_ms: 5000 });
await call(client, 'bash_output', { task_id: tests, wait_ms: 5000, filter: 'passed' });
await call(client, 'bash_list', {});

console.log('(the MCP server process is stopped, and a new one started for the same session)\n');
await client.close();
client = await connect();
await call(client, 'bash_input', { task_id: repl, text: '2**10\n', close: true });
await call(client, 'bash_output', { task_id: repl, wait_ms: 5000 });
await call(client, 'bash_output', { task_id: tests, wait_ms: 10000 });
await new Promise((resolve) => setTimeout(resolve, 1500));
await call(client, 'bash', { command: 'echo next', description: 'Print next' });
await call(client, 'bash_kill', { task_id: repl });
await client.close();
