/**
 * `durable-bash mcp --bash-arguments claude-code` with the MCP SDK's own client: `bash` lists Claude
 * Code's Bash schema and takes its arguments, as a task-augmented call too.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { callTool, useMcpServers } from '../helpers/mcp-client.js';

const suite = useDevServerWithWorker();
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-claude-code-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const mcp = useMcpServers(() => ({
  address: suite.env.address,
  taskQueue: suite.worker.taskQueue,
  stateDir,
}));

const CLAUDE_CODE = ['--bash-arguments', 'claude-code'];

describe('durable-bash mcp --bash-arguments claude-code', () => {
  it("lists Claude Code's Bash schema for bash, and the other tools as they are", async () => {
    const { client } = await mcp.stdio(`claude-code-mcp-${randomUUID()}`, CLAUDE_CODE);
    const { tools } = await client.listTools();
    const bash = tools.find((tool) => tool.name === 'bash');
    expect(bash?.inputSchema).toMatchObject({ required: ['command'], additionalProperties: false });
    expect(Object.keys(bash?.inputSchema.properties ?? {})).toEqual([
      'command',
      'timeout',
      'description',
      'run_in_background',
      'dangerouslyDisableSandbox',
    ]);
    expect(tools.find((tool) => tool.name === 'bash_output')?.inputSchema.required).toEqual(['task_id']);
  });

  it("runs Claude Code's arguments with durable-bash's answers, and refuses durable-bash's own", async () => {
    const { client } = await mcp.stdio(`claude-code-mcp-${randomUUID()}`, CLAUDE_CODE);
    expect(await callTool(client, 'bash', { command: 'echo hi; exit 2' })).toEqual({
      content: [{ type: 'text', text: 'hi\n[exit code: 2]' }],
    });
    expect(await callTool(client, 'bash', { command: 'echo hi', timeoutMs: 5000 })).toEqual({
      content: [{ type: 'text', text: 'unknown argument: timeoutMs' }],
      isError: true,
    });
  });

  it('starts a task-augmented call as a background task, its timeout the task’s limit', async () => {
    const { client } = await mcp.stdio(`claude-code-mcp-${randomUUID()}`, CLAUDE_CODE);
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: { name: 'bash', arguments: { command: 'echo up; sleep 30', timeout: 1000 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'up\n[timed out after 1000ms]\n[killed by signal: SIGTERM]' }],
    });
  });
});
