import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { Tool, ToolResult } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { presentBashCall, presentBashResult, presentTaskCall } from '../../src/tools/present.js';

const text = (value: string, isError = false): ToolResult =>
  isError
    ? { content: [{ type: 'text', text: value }], isError: true }
    : { content: [{ type: 'text', text: value }] };

describe('presentBashCall', () => {
  it('shows a foreground run as a terminal card titled with the exact command', () => {
    expect(presentBashCall({ command: 'ls -la src', description: 'List sources' })).toEqual({
      card: 'terminal',
      title: 'ls -la src',
      description: 'List sources',
    });
  });

  it("carries the model's workdir as the terminal cwd, as given", () => {
    expect(presentBashCall({ command: 'make', description: 'Build', workdir: 'pkg/a' })).toEqual({
      card: 'terminal',
      title: 'make',
      description: 'Build',
      cwd: 'pkg/a',
    });
  });

  it('shows a background run as a generic execute card with the description as text', () => {
    expect(
      presentBashCall({ command: 'npm test', description: 'Run tests', run_in_background: true }),
    ).toEqual({
      card: 'generic',
      title: 'npm test',
      kind: 'execute',
      rawInput: 'npm test',
      content: [{ type: 'text', text: 'Run tests' }],
    });
  });

  it.each([
    [undefined],
    [null],
    ['ls'],
    [{ cmd: 'ls' }],
    [{ command: 'ls', description: 'd', extra: 1 }],
    [[1, 2]],
  ])('falls back to a generic card for %j without throwing', (args) => {
    expect(presentBashCall(args)).toEqual({
      card: 'generic',
      title: 'bash',
      kind: 'execute',
      rawInput: args,
    });
  });
});

describe('presentBashResult', () => {
  const call = { command: 'make', description: 'Build' };

  it('parses the exit code of a finished foreground run back from its final marker line', () => {
    expect(presentBashResult(call, text('out\n[stderr]\nerr\n[exit code: 3]'))).toEqual({
      card: 'terminal',
      output: 'out\n[stderr]\nerr',
      exitCode: 3,
    });
  });

  it('parses a signal death', () => {
    expect(
      presentBashResult(call, text('(no output)\n[timed out after 5ms]\n[killed by signal: SIGTERM]')),
    ).toEqual({
      card: 'terminal',
      output: '(no output)\n[timed out after 5ms]',
      signal: 'SIGTERM',
    });
  });

  it('reports exit code 0 when no status marker ends the text', () => {
    expect(presentBashResult(call, text('hello\n'))).toEqual({
      card: 'terminal',
      output: 'hello\n',
      exitCode: 0,
    });
  });

  it('fences a background acknowledgement as console text', () => {
    expect(
      presentBashResult({ ...call, run_in_background: true }, text('started background task bash-1')),
    ).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: '```console\nstarted background task bash-1\n```' }],
    });
  });

  it('fences an error result as console text, with no exit pill', () => {
    expect(presentBashResult(call, text('command aborted; task bash-1 was stopped', true))).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: '```console\ncommand aborted; task bash-1 was stopped\n```' }],
    });
  });

  it('never throws on malformed arguments or results', () => {
    expect(presentBashResult(42, text('x'))).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: '```console\nx\n```' }],
    });
    expect(presentBashResult(call, {} as ToolResult)).toEqual({ card: 'terminal', output: '', exitCode: 0 });
    expect(presentBashResult(call, { content: [null, { type: 'text' }] } as unknown as ToolResult)).toEqual({
      card: 'terminal',
      output: '\n',
      exitCode: 0,
    });
  });
});

describe('presentTaskCall', () => {
  it('titles a bash_kill call with the task id, which is also the raw input', () => {
    expect(presentTaskCall('bash_kill', 'Kill background task', { task_id: 'bash-3' })).toEqual({
      card: 'generic',
      title: 'Kill background task bash-3',
      kind: 'execute',
      rawInput: 'bash-3',
    });
  });

  it.each([[undefined], [{}], [{ task_id: 3 }], ['bash-3']])(
    'falls back to a generic card for %j',
    (args) => {
      expect(presentTaskCall('bash_kill', 'Kill background task', args)).toEqual({
        card: 'generic',
        title: 'bash_kill',
        kind: 'execute',
        rawInput: args,
      });
    },
  );
});

describe('the task tools as createBashTools makes them', () => {
  // Presentation is pure: a lazy connection that never connects is enough.
  const tools = createBashTools({ client: new Client({ connection: Connection.lazy() }) });
  const tool = (name: string) => tools.find((candidate) => candidate.name === name) as Tool;

  it('title bash_output and bash_kill calls with the task id, and fence their results', () => {
    expect(tool('bash_output').presentCall({ task_id: 'bash-3' })).toEqual({
      card: 'generic',
      title: 'Read output from background task bash-3',
      kind: 'execute',
      rawInput: 'bash-3',
    });
    expect(tool('bash_kill').presentCall({ task_id: 'bash-3' })).toEqual({
      card: 'generic',
      title: 'Kill background task bash-3',
      kind: 'execute',
      rawInput: 'bash-3',
    });
    expect(tool('bash_output').presentCall({ id: 'bash-3' })).toEqual({
      card: 'generic',
      title: 'bash_output',
      kind: 'execute',
      rawInput: { id: 'bash-3' },
    });
    expect(tool('bash_output').presentResult({ task_id: 'bash-3' }, text('hi\n[status: running]'))).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: '```console\nhi\n[status: running]\n```' }],
    });
  });

  it('come in the order bash, bash_output, bash_kill, bash_list, bash_input', () => {
    expect(tools.map((candidate) => candidate.name)).toEqual([
      'bash',
      'bash_output',
      'bash_kill',
      'bash_list',
      'bash_input',
    ]);
  });

  it('say how long a bash_output call may wait and which lines it shows, as text under the title', () => {
    expect(tool('bash_output').presentCall({ task_id: 'bash-3', wait_ms: 5000, filter: 'FAIL|ok' })).toEqual({
      card: 'generic',
      title: 'Read output from background task bash-3',
      kind: 'execute',
      rawInput: 'bash-3',
      content: [
        { type: 'text', text: 'waits up to 5000ms for new output\nshows only lines matching /FAIL|ok/' },
      ],
    });
    expect(tool('bash_output').presentCall({ task_id: 'bash-3', wait_ms: 0 })).toEqual({
      card: 'generic',
      title: 'Read output from background task bash-3',
      kind: 'execute',
      rawInput: 'bash-3',
    });
    // An invalid filter or wait falls back to the generic card.
    for (const args of [
      { task_id: 'bash-3', filter: '(' },
      { task_id: 'bash-3', wait_ms: -1 },
    ]) {
      expect(tool('bash_output').presentCall(args)).toEqual({
        card: 'generic',
        title: 'bash_output',
        kind: 'execute',
        rawInput: args,
      });
    }
  });

  it('title a bash_list call by what it lists, and fence its result', () => {
    const list = tool('bash_list');
    expect(list.presentCall({})).toEqual({
      card: 'generic',
      title: 'List background tasks',
      kind: 'read',
      rawInput: {},
    });
    expect(list.presentCall({ all: true })).toEqual({
      card: 'generic',
      title: 'List background tasks, ended ones too',
      kind: 'read',
      rawInput: { all: true },
    });
    for (const odd of [undefined, null, 'x', { all: 'yes' }, { every: true }]) {
      expect(list.presentCall(odd)).toEqual({
        card: 'generic',
        title: 'bash_list',
        kind: 'read',
        rawInput: odd,
      });
    }
    expect(list.presentResult({}, text('(no background tasks)'))).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: '```console\n(no background tasks)\n```' }],
    });
    expect(list.presentResult(null, { content: null } as unknown as ToolResult)).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: '```console\n\n```' }],
    });
  });
});
