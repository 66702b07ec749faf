/**
 * What the MCP transcript scripts share (not a script itself): a `durable-bash mcp` process over
 * stdio with the MCP SDK's own client, and a tool call that prints the request and the text it got
 * back. The scripts run against the built CLI (`npm run build`).
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** The built CLI. */
export const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

/**
 * Starts `durable-bash mcp <args>` and connects a client named `name` to it; `beforeConnect` sets
 * the client's notification handlers.
 */
export async function connectMcp(name, args, beforeConnect = () => undefined) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', ...args],
    stderr: 'ignore',
  });
  const client = new Client({ name, version: '1.0.0' });
  beforeConnect(client);
  await client.connect(transport);
  return client;
}

/** A tool result's text blocks, with `---` between them. */
export const resultText = (result) => result.content.map((block) => block.text).join('\n---\n');

/** Calls a tool, printing the request and the text it got back; resolves with that text. */
export async function call(client, name, args) {
  console.log(`-> tools/call ${name} ${JSON.stringify(args)}`);
  const result = await client.callTool({ name, arguments: args });
  const text = resultText(result);
  console.log(`<- ${result.isError ? '(isError) ' : ''}${text.replaceAll('\n', '\n   ')}\n`);
  return text;
}
