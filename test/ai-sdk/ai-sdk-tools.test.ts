import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateText, stepCountIs } from 'ai';
import aiPackage from 'ai/package.json' with { type: 'json' };
import { MockLanguageModelV3 } from 'ai/test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type AiSdkTools, createAiSdkTools, isBashToolError } from '../../src/ai-sdk/index.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../helpers/processes.js';

/** This file runs against AI SDK 6 and 7; the two differ in where a call's context goes and how a tool's error reads. */
const AI_SDK_MAJOR = Number(aiPackage.version.split('.')[0]);

/**
 * A call's session, as each major takes it: 7 per tool (`toolsContext`), 6 for the whole call. An
 * `object` to the type checker, which sees 7's types only (where `AiSdkTools` declares no context).
 */
function sessionContext(tools: AiSdkTools, context: unknown): object {
  if (context === undefined) return {};
  return AI_SDK_MAJOR >= 7
    ? { toolsContext: Object.fromEntries(Object.keys(tools).map((name) => [name, context])) }
    : { experimental_context: context };
}

/** A finished tool call's error, if it failed: 7 gives a `tool-error` output, 6 `success` and `error`. */
function toolErrorOf(event: object): unknown {
  const finished = event as {
    success?: boolean;
    error?: unknown;
    toolOutput?: { type: string; error?: unknown };
  };
  if (finished.toolOutput !== undefined)
    return finished.toolOutput.type === 'tool-error' ? finished.toolOutput.error : undefined;
  return finished.success === false ? finished.error : undefined;
}

const suite = useDevServerWithWorker();
let tools: AiSdkTools;

beforeAll(() => {
  tools = createAiSdkTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
});

type CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0];
type Content = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>['content'];

/** A tool result as the model reads it in its next prompt. */
interface Received {
  toolName: string;
  output: { type: string; value?: unknown };
}

/** What the model does next, given the tool results of its previous step (none on the first). */
type Turn = (received: Received[], options: CallOptions) => Content | Promise<Content>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A mock model that plays `turn` each step and records every tool result it was given. */
function scriptedModel(turn: Turn) {
  const received: Received[][] = [];
  const model = new MockLanguageModelV3({
    async doGenerate(options) {
      options.abortSignal?.throwIfAborted();
      const last = options.prompt.at(-1);
      const results: Received[] = [];
      if (last?.role === 'tool') {
        for (const part of last.content) {
          if (part.type === 'tool-result') results.push({ toolName: part.toolName, output: part.output });
        }
      }
      received.push(results);
      const content = await turn(results, options);
      const calls = content.some((part) => part.type === 'tool-call');
      return {
        content,
        finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return { model, received };
}

let callCount = 0;
function call(toolName: string, input: Record<string, unknown>): Content {
  callCount += 1;
  return [{ type: 'tool-call', toolCallId: `call-${callCount}`, toolName, input: JSON.stringify(input) }];
}
const answer = (text: string): Content => [{ type: 'text', text }];
const textOf = (received: Received) => received.output.value as string;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const NO_NEW_OUTPUT_RUNNING = '(no new output)\n[status: running]';

describe('createAiSdkTools', () => {
  it('runs against the AI SDK major its vitest config resolves `ai` to', () => {
    expect(AI_SDK_MAJOR).toBe(inject('aiSdkMajor'));
  });

  it('offers the model every tool createBashTools makes, with its description and JSON Schema', async () => {
    const bashTools = createBashTools({ client: suite.env.client });
    const { model } = scriptedModel(() => answer('nothing to do'));
    await generateText({ model, tools, prompt: 'look' });
    const offered = model.doGenerateCalls[0]?.tools ?? [];
    expect(offered.map((tool) => tool.name)).toEqual(bashTools.map((tool) => tool.name));
    for (const bashTool of bashTools) {
      expect(offered.find((tool) => tool.name === bashTool.name)).toMatchObject({
        type: 'function',
        description: bashTool.description,
        inputSchema: bashTool.inputSchema,
      });
    }
  });

  it('drives a background run, a read and a kill through a generateText loop', async () => {
    const marker = Math.floor(Math.random() * 1000) + 7000;
    let taskId = '';
    const { model, received } = scriptedModel(async (results) => {
      const [result] = results;
      if (result === undefined) {
        return call('bash', {
          command: `sleep 0.5; echo ready; sleep ${marker}`,
          description: 'Start a long job',
          run_in_background: true,
        });
      }
      if (result.toolName === 'bash') {
        taskId = startedTaskId(textOf(result));
        return call('bash_output', { task_id: taskId });
      }
      if (result.toolName === 'bash_output' && textOf(result) === NO_NEW_OUTPUT_RUNNING) {
        await sleep(200);
        return call('bash_output', { task_id: taskId });
      }
      if (result.toolName === 'bash_output') return call('bash_kill', { task_id: taskId });
      return answer('the job is stopped');
    });

    const result = await generateText({
      model,
      tools,
      prompt: 'start a long job, check on it, then stop it',
      stopWhen: stepCountIs(100),
      ...sessionContext(tools, { sessionId: 'ai-sdk-session-a' }),
    });

    expect(taskId).toMatch(/^bash-[0-9a-f-]{36}$/);
    const seen = received.flat();
    expect(seen[0]).toEqual({
      toolName: 'bash',
      output: { type: 'text', value: `started background task ${taskId}` },
    });
    const reads = seen.filter((item) => item.toolName === 'bash_output').map(textOf);
    expect(reads.at(-1)).toBe('ready\n[status: running]');
    expect(reads.slice(0, -1).every((read) => read === NO_NEW_OUTPUT_RUNNING)).toBe(true);
    expect(seen.at(-1)).toEqual({
      toolName: 'bash_kill',
      output: { type: 'text', value: `killed background task ${taskId}` },
    });
    expect(result.text).toBe('the job is stopped');
    expect(processesMatching(new RegExp(`^sleep ${marker}$`))).toEqual([]);

    // The task belongs to the session the call's context named.
    const bashOutput = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
    }).find((tool) => tool.name === 'bash_output') as Tool;
    expect(
      await bashOutput.execute({ task_id: taskId }, { agent: { sessionId: 'ai-sdk-session-b' } }),
    ).toEqual({
      content: [{ type: 'text', text: `task ${taskId} belongs to another session` }],
      isError: true,
    });
  });

  it("answers a program's prompt with bash_input in a generateText loop", async () => {
    let taskId = '';
    const { model, received } = scriptedModel(async (results) => {
      const [result] = results;
      if (result === undefined) {
        return call('bash', {
          command: 'read -r -p "name? " name; echo "hello $name"',
          description: 'Ask for a name',
          run_in_background: true,
          keep_stdin_open: true,
        });
      }
      if (result.toolName === 'bash') {
        taskId = startedTaskId(textOf(result));
        return call('bash_input', { task_id: taskId, text: 'ada\n' });
      }
      if (result.toolName === 'bash_input') return call('bash_output', { task_id: taskId, wait_ms: 10_000 });
      if (result.toolName === 'bash_output' && !textOf(result).includes('[status: completed')) {
        await sleep(200);
        return call('bash_output', { task_id: taskId, wait_ms: 10_000 });
      }
      return answer('greeted');
    });
    await generateText({ model, tools, prompt: 'greet ada', stopWhen: stepCountIs(60) });
    const seen = received.flat();
    expect(seen.find((item) => item.toolName === 'bash_input')).toEqual({
      toolName: 'bash_input',
      output: { type: 'text', value: `wrote 4 bytes to the stdin of task ${taskId}` },
    });
    const reads = seen
      .filter((item) => item.toolName === 'bash_output')
      .map(textOf)
      .join('\n');
    // `read -p` prompts on stderr.
    expect(reads).toContain('hello ada\n');
    expect(reads).toContain('[status: completed, exit code: 0]');
  });

  it('aborting generateText stops a foreground run and kills its processes', async () => {
    const marker = Math.floor(Math.random() * 1000) + 8000;
    const abort = new AbortController();
    const toolErrors: unknown[] = [];
    const { model } = scriptedModel((results) =>
      results.length === 0
        ? call('bash', { command: `sleep ${marker}`, description: 'Sleep a long time' })
        : [],
    );
    const pending = generateText({
      model,
      tools,
      prompt: 'sleep',
      stopWhen: stepCountIs(5),
      abortSignal: abort.signal,
      experimental_onToolCallFinish: (event) => {
        const error = toolErrorOf(event);
        if (error !== undefined) toolErrors.push(error);
      },
    });
    await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 1);
    abort.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(toolErrors).toHaveLength(1);
    const [error] = toolErrors;
    expect(isBashToolError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^command aborted; task bash-[0-9a-f-]{36} was stopped$/);
    await waitFor(() => processesMatching(new RegExp(`^sleep ${marker}$`)).length === 0);
  });

  it("gives the model the tool's own error line for bad arguments and unknown tasks", async () => {
    const unknownId = 'bash-00000000-0000-4000-8000-000000000000';
    const { model, received } = scriptedModel((results) => {
      if (results.length === 0)
        return call('bash', { command: 'echo hi', description: 'Say hi', timeoutMs: -1 });
      if (results[0]?.toolName === 'bash') return call('bash_kill', { task_id: unknownId });
      return answer('done');
    });
    await generateText({ model, tools, prompt: 'try', stopWhen: stepCountIs(5) });
    const bashKill = createBashTools({ client: suite.env.client }).find(
      (tool) => tool.name === 'bash_kill',
    ) as Tool;
    const direct = await bashKill.execute({ task_id: unknownId });
    expect(direct.isError).toBe(true);
    expect(received.flat()).toEqual([
      {
        toolName: 'bash',
        output: { type: 'error-text', value: 'invalid timeoutMs: expected a positive number, got -1' },
      },
      { toolName: 'bash_kill', output: { type: 'error-text', value: direct.content[0]?.text } },
    ]);
  });

  it('takes the session and cwd from the options, and lets the call context override them', async () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-ai-sdk-')));
    const scoped = createAiSdkTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      sessionId: 'ai-sdk-session-c',
      cwd: root,
    });
    const pwdIn = async (context?: unknown) => {
      const { model, received } = scriptedModel((results) =>
        results.length === 0 ? call('bash', { command: 'pwd', description: 'Print the cwd' }) : answer('ok'),
      );
      await generateText({
        model,
        tools: scoped,
        prompt: 'where',
        stopWhen: stepCountIs(3),
        ...sessionContext(scoped, context),
      });
      return received.flat()[0]?.output;
    };
    expect(await pwdIn()).toEqual({ type: 'text', value: `${root}\n` });
    expect(await pwdIn({ cwd: '/' })).toEqual({ type: 'text', value: '/\n' });
    expect(await pwdIn({ sessionId: 42 })).toEqual({
      type: 'error-text',
      value: `invalid ${AI_SDK_MAJOR >= 7 ? 'toolsContext.bash' : 'experimental_context'}.sessionId: expected a non-empty string, got 42`,
    });
  });
});
