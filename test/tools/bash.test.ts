import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KILL_GRACE_MS } from '../../src/shared/limits.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { text } from '../helpers/tool-calls.js';

const OUTPUT_LIMIT_BYTES = 4096;
const MAX_TIMEOUT_MS = 3000;

let env: TestWorkflowEnvironment;
let worker: RunningWorker;
let bash: Tool;
let spillDir: string;
let defaultWorkdir: string;

beforeAll(async () => {
  env = await createDevServerEnv();
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-')));
  spillDir = path.join(root, 'spill');
  defaultWorkdir = path.join(root, 'default');
  execFileSync('mkdir', ['-p', defaultWorkdir, path.join(root, 'session', 'sub')]);
  worker = await startBashWorker(env, {
    outputLimitBytes: OUTPUT_LIMIT_BYTES,
    maxTimeoutMs: MAX_TIMEOUT_MS,
    defaultTimeoutMs: 2000,
    spillDir,
    defaultWorkdir,
  });
  [bash] = createBashTools({ client: env.client, taskQueue: worker.taskQueue }) as [Tool];
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

const run = (command: string, extra: Record<string, unknown> = {}) =>
  bash.execute({ command, description: 'Run a test command', ...extra });

describe('bash (foreground)', () => {
  it('returns stdout alone', async () => {
    expect(await run('echo hello')).toEqual({ content: [{ type: 'text', text: 'hello\n' }] });
  });

  it('marks stderr with a [stderr] line', async () => {
    expect(text(await run('echo oops >&2'))).toBe('[stderr]\noops\n');
  });

  it('puts stdout first, then stderr, separated by a single newline', async () => {
    expect(text(await run('printf out; echo err >&2'))).toBe('out\n[stderr]\nerr\n');
    expect(text(await run('echo out; echo err >&2'))).toBe('out\n[stderr]\nerr\n');
  });

  it('says (no output) when the command prints nothing', async () => {
    expect(text(await run('true'))).toBe('(no output)');
  });

  it('reports a non-zero exit as a normal result', async () => {
    const result = await run('echo hi; echo err >&2; exit 3');
    expect(result).toEqual({ content: [{ type: 'text', text: 'hi\n[stderr]\nerr\n[exit code: 3]' }] });
    expect(text(await run('exit 1'))).toBe('(no output)\n[exit code: 1]');
  });

  it('reports a signal death', async () => {
    expect(text(await run('echo before; kill -9 $$'))).toBe('before\n[killed by signal: SIGKILL]');
  });

  it('times out a command and says so', async () => {
    const started = Date.now();
    expect(text(await run('echo start; sleep 30', { timeoutMs: 500 }))).toBe(
      'start\n[timed out after 500ms]\n[killed by signal: SIGTERM]',
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('reports the timeout even when the command traps SIGTERM and exits 0', async () => {
    const result = await run(`trap 'echo trapped; exit 0' TERM; echo ready; sleep 30 & wait`, {
      timeoutMs: 500,
    });
    expect(text(result)).toBe('ready\ntrapped\n[timed out after 500ms]');
  });

  it('kills a command that ignores SIGTERM after the grace period', async () => {
    const started = Date.now();
    const result = await run(`trap '' TERM; sleep 30 & wait; sleep 30`, { timeoutMs: 300 });
    expect(text(result)).toBe('(no output)\n[timed out after 300ms]\n[killed by signal: SIGKILL]');
    expect(Date.now() - started).toBeGreaterThanOrEqual(KILL_GRACE_MS);
  });

  it('clamps the timeout to the configured cap', async () => {
    expect(text(await run('sleep 30', { timeoutMs: 3_600_000 }))).toBe(
      `(no output)\n[timed out after ${MAX_TIMEOUT_MS}ms]\n[killed by signal: SIGTERM]`,
    );
  });

  it('keeps the tail of a long stream and spills the whole of it, byte-exact, to a 0600 file', async () => {
    const lines = 2000;
    const result = text(await run(`for i in $(seq 1 ${lines}); do echo "line $i"; done; echo short >&2`));
    const expected = Array.from({ length: lines }, (_, i) => `line ${i + 1}\n`).join('');
    const match = /^\[output truncated; full output: (.+)\]$/m.exec(result);
    expect(match).not.toBeNull();
    const spillPath = match?.[1] ?? '';
    expect(path.dirname(spillPath)).toBe(spillDir);
    expect(readFileSync(spillPath, 'utf8')).toBe(expected);
    expect(statSync(spillPath).mode & 0o777).toBe(0o600);
    expect(statSync(spillDir).mode & 0o777).toBe(0o700);
    const tail = expected.slice(-OUTPUT_LIMIT_BYTES);
    expect(result).toBe(`${tail}[output truncated; full output: ${spillPath}]\n[stderr]\nshort\n`);
  });

  it('cuts a tail on a character boundary', async () => {
    // Three-byte characters: a byte-wise cut lands inside one unless it skips the partial character.
    const result = text(await run(`for i in $(seq 1 ${OUTPUT_LIMIT_BYTES}); do printf '€'; done`));
    const tail = result.split('\n')[0] ?? '';
    expect(tail).toMatch(/^€+$/);
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(OUTPUT_LIMIT_BYTES);
    expect(Buffer.byteLength(tail)).toBeGreaterThan(OUTPUT_LIMIT_BYTES - 3);
  });
});

describe('bash without a terminal', () => {
  it('gets the variables that keep a command from waiting for a person', async () => {
    expect(text(await run('echo "$GIT_TERMINAL_PROMPT $GIT_EDITOR $DEBIAN_FRONTEND $PIP_NO_INPUT"'))).toBe(
      '0 true noninteractive 1\n',
    );
  });

  it('has a git commit that would open an editor fail at once', async () => {
    const repo = mkdtempSync(path.join(defaultWorkdir, 'repo-'));
    execFileSync('git', ['init', '-q', repo]);
    expect(
      text(
        await run('git -c user.name=agent -c user.email=agent@example.com commit --allow-empty', {
          workdir: repo,
        }),
      ),
    ).toBe('[stderr]\nAborting commit due to empty commit message.\n[exit code: 1]');
  });
});

describe('bash workdir', () => {
  it('runs in the worker default when neither the call nor the session gives one', async () => {
    expect(text(await run('pwd'))).toBe(`${defaultWorkdir}\n`);
  });

  it('uses an absolute workdir as given', async () => {
    // Not `/`: the same tests run inside the sandbox, which refuses a workdir that holds the host.
    const absolute = path.join(path.dirname(defaultWorkdir), 'session');
    expect(text(await run('pwd', { workdir: absolute }))).toBe(`${absolute}\n`);
  });

  it('runs in the session cwd, and resolves a relative workdir against it', async () => {
    const cwd = path.join(path.dirname(defaultWorkdir), 'session');
    const agent = { sessionId: 'session-a', cwd };
    expect(text(await bash.execute({ command: 'pwd', description: 'Show cwd' }, { agent }))).toBe(`${cwd}\n`);
    expect(
      text(await bash.execute({ command: 'pwd', description: 'Show cwd', workdir: 'sub' }, { agent })),
    ).toBe(`${cwd}/sub\n`);
  });

  it('resolves a relative workdir against the worker default when the session has no cwd', async () => {
    expect(text(await run('pwd', { workdir: '../session' }))).toBe(
      `${path.join(path.dirname(defaultWorkdir), 'session')}\n`,
    );
  });

  it('fails clearly, and quickly, for a workdir that does not exist', async () => {
    expect(await run('pwd', { workdir: '/no/such/dir' })).toEqual({
      content: [{ type: 'text', text: 'workdir does not exist or is not a directory: /no/such/dir' }],
      isError: true,
    });
  });
});

describe('bash arguments', () => {
  const cases: [string, unknown, string][] = [
    ['a missing command', { description: 'd' }, 'invalid command: expected a non-blank string, got nothing'],
    [
      'a blank command',
      { command: '  ', description: 'd' },
      'invalid command: expected a non-blank string, got "  "',
    ],
    [
      'a blank description',
      { command: 'ls', description: '' },
      'invalid description: expected a non-blank string, got ""',
    ],
    [
      'a non-string command',
      { command: 42, description: 'd' },
      'invalid command: expected a non-blank string, got 42',
    ],
    [
      'a negative timeout',
      { command: 'ls', description: 'd', timeoutMs: -1 },
      'invalid timeoutMs: expected a positive number, got -1',
    ],
    [
      'a zero timeout',
      { command: 'ls', description: 'd', timeoutMs: 0 },
      'invalid timeoutMs: expected a positive number, got 0',
    ],
    [
      'an infinite timeout',
      { command: 'ls', description: 'd', timeoutMs: Number.POSITIVE_INFINITY },
      'invalid timeoutMs: expected a positive number, got Infinity',
    ],
    [
      'a NaN timeout',
      { command: 'ls', description: 'd', timeoutMs: Number.NaN },
      'invalid timeoutMs: expected a positive number, got NaN',
    ],
    [
      'a string timeout',
      { command: 'ls', description: 'd', timeoutMs: '100' },
      'invalid timeoutMs: expected a positive number, got "100"',
    ],
    [
      'a non-boolean run_in_background',
      { command: 'ls', description: 'd', run_in_background: 'yes' },
      'invalid run_in_background: expected a boolean, got "yes"',
    ],
    [
      'an empty workdir',
      { command: 'ls', description: 'd', workdir: '' },
      'invalid workdir: expected a non-empty path, got ""',
    ],
    [
      'a zero max_output_tokens',
      { command: 'ls', description: 'd', max_output_tokens: 0 },
      'invalid max_output_tokens: expected a whole number of tokens from 1 to 1000000, got 0',
    ],
    [
      'a fractional max_output_tokens',
      { command: 'ls', description: 'd', max_output_tokens: 2.5 },
      'invalid max_output_tokens: expected a whole number of tokens from 1 to 1000000, got 2.5',
    ],
    [
      'a max_output_tokens as a string',
      { command: 'ls', description: 'd', max_output_tokens: '100' },
      'invalid max_output_tokens: expected a whole number of tokens from 1 to 1000000, got "100"',
    ],
    [
      'a max_output_tokens for a background run',
      { command: 'ls', description: 'd', run_in_background: true, max_output_tokens: 100 },
      "invalid max_output_tokens: a background run answers with its task id only; give max_output_tokens to bash_output's reads",
    ],
    ['an unknown key', { command: 'ls', description: 'd', cwd: '/' }, 'unknown argument: cwd'],
    ['not an object', 'ls -la', 'invalid arguments: expected an object, got "ls -la"'],
    ['null', null, 'invalid arguments: expected an object, got null'],
  ];

  it.each(cases)('rejects %s with one line, and starts nothing', async (_name, args, message) => {
    const before = await countWorkflows();
    expect(await bash.execute(args)).toEqual({ content: [{ type: 'text', text: message }], isError: true });
    expect(message).not.toContain('\n');
    expect(await countWorkflows()).toBe(before);
  });
});

describe('bash abort and reachability', () => {
  it('aborting the call stops the run and kills its process group', async () => {
    // Durations no other test uses, so only this command's sleeps count.
    const tag = 300_000 + Math.floor(Math.random() * 90_000);
    const sleeps = new RegExp(`^sleep (${tag}|${tag + 1})$`);
    const explain = () => `sleeps: ${JSON.stringify(processesMatching(/^sleep /))}`;
    // The command says when both sleeps run with a file, not through ps: ps can stall for seconds
    // on a process in memory reclaim (the containment tests' memory hog), past the 2 s timeout.
    const started = path.join(defaultWorkdir, `started-${tag}`);
    const abort = new AbortController();
    const pending = bash.execute(
      { command: `sleep ${tag} & sleep ${tag + 1} & touch ${started}; wait`, description: 'Sleep' },
      { signal: abort.signal },
    );
    await waitFor(() => existsSync(started), 30_000, 20);
    abort.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^command aborted; task bash-[0-9a-f-]{36} was stopped$/);
    await waitFor(() => processesMatching(sleeps).length === 0, 10_000, 50, explain);
  });

  it('answers with an error within a bounded time when Temporal is unreachable', async () => {
    const { Connection } = await import('@temporalio/client');
    const connection = Connection.lazy({ address: '127.0.0.1:1' });
    const [offline] = createBashTools({ client: new Client({ connection }) }) as [Tool];
    const started = Date.now();
    const result = await offline.execute({ command: 'echo hi', description: 'Say hi' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Temporal is unreachable at 127\.0\.0\.1:1: /);
    expect(text(result)).not.toContain('\n');
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

async function countWorkflows(): Promise<number> {
  return (await env.client.workflow.count(`TaskQueue = '${worker.taskQueue}'`)).count;
}
