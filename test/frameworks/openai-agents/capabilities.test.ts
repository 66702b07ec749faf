/**
 * The SDK's own tools over a durable-bash session: a SandboxAgent with the filesystem and shell
 * capabilities, driven by the SDK's ScriptedModel, in this process.
 */
import { type ModelResponse, run } from '@openai/agents-core';
import { filesystem, SandboxAgent, shell } from '@openai/agents-core/sandbox';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { describe, expect, it } from 'vitest';
import { useOpenAiSandbox } from '../../helpers/openai-sandbox.js';

const sandbox = useOpenAiSandbox('oa-caps');

/** A 1x1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** An apply_patch call as the Responses API gives it. */
const applyPatchCall = (callId: string, operation: Record<string, string>): ModelResponse['output'] => [
  { type: 'apply_patch_call', callId, status: 'completed', operation } as ModelResponse['output'][number],
];

/** Every tool result the model was given by its last call, by call id: a function's output, a patch's status and output. */
function toolResults(model: ScriptedModel): Map<string, unknown> {
  const input = model.calls.at(-1)?.request.input;
  const items = Array.isArray(input) ? input : [];
  const results = new Map<string, unknown>();
  for (const item of items) {
    if (item.type === 'function_call_result') results.set(item.callId, item.output);
    if (item.type === 'apply_patch_call_output')
      results.set(item.callId, { status: item.status, output: item.output });
  }
  return results;
}

/** A function tool's text output. */
const text = (output: unknown) => (output as { type: 'text'; text: string }).text;

describe('a SandboxAgent with the filesystem capability on durable-bash', () => {
  it('creates and patches a file with apply_patch, reads it back, and views an image', async () => {
    const session = await sandbox.client.create();
    await session.materializeEntry({
      path: 'dot.png',
      entry: { type: 'file', content: new Uint8Array(PNG) },
    });
    const model = new ScriptedModel([
      applyPatchCall('call-create', { type: 'create_file', path: 'notes.md', diff: '+hello\n+world\n' }),
      applyPatchCall('call-update', {
        type: 'update_file',
        path: '/workspace/notes.md',
        diff: '@@\n hello\n-world\n+durable world\n',
      }),
      [functionCall('exec_command', { cmd: 'cat /workspace/notes.md; echo' }, { callId: 'call-cat' })],
      applyPatchCall('call-move', {
        type: 'update_file',
        path: '/workspace/notes.md',
        moveTo: '/workspace/docs/notes.md',
        diff: '',
      }),
      [functionCall('view_image', { path: '/workspace/dot.png' }, { callId: 'call-image' })],
      [functionCall('view_image', { path: 'missing.png' }, { callId: 'call-missing' })],
      [assistantMessage('done')],
    ]);
    const agent = new SandboxAgent({
      name: 'editor',
      instructions: 'Edit the notes.',
      model,
      capabilities: [filesystem(), shell()],
    });
    const result = await run(agent, 'edit the notes', { sandbox: { session } });
    expect(result.finalOutput).toBe('done');

    const results = toolResults(model);
    expect(results.get('call-create')).toEqual({ status: 'completed', output: undefined });
    expect(results.get('call-update')).toEqual({ status: 'completed', output: undefined });
    expect(results.get('call-move')).toEqual({ status: 'completed', output: undefined });
    expect(text(results.get('call-cat'))).toMatch(
      /\nProcess exited with code 0\nOutput:\nhello\ndurable world\n$/,
    );
    expect(results.get('call-image')).toEqual([
      { type: 'input_image', image: `data:image/png;base64,${PNG.toString('base64')}` },
    ]);
    // The capability's own line for a missing image, as on UnixLocal.
    expect(text(results.get('call-missing'))).toBe('image path `missing.png` was not found');
    expect(new TextDecoder().decode(await session.readFile({ path: 'docs/notes.md' }))).toBe(
      'hello\ndurable world',
    );
    expect(await session.pathExists('notes.md')).toBe(false);
    await session.delete();
  });
});

describe("a SandboxAgent's shell capability on durable-bash", () => {
  it('tells the model which write_stdin id it does not know', async () => {
    const session = await sandbox.client.create();
    const model = new ScriptedModel([
      [functionCall('write_stdin', { session_id: 7, chars: '' }, { callId: 'call-poll' })],
      [assistantMessage('done')],
    ]);
    const agent = new SandboxAgent({ name: 'poller', model, capabilities: [shell()] });
    await run(agent, 'poll', { sandbox: { session } });
    expect(text(toolResults(model).get('call-poll'))).toMatch(
      /\nProcess exited with code 1\nOutput:\nwrite_stdin failed: session not found: 7$/,
    );
    await session.delete();
  });
});
