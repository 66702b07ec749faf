/**
 * The real `claude` binary (`@anthropic-ai/claude-code`'s native package) in child processes, each
 * test with a home of its own, pointed at a scripted Messages API. After each test every process it
 * started, and every process those started, is gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { removeDir } from './remove-dir.js';

/** The version the tests are written against (package.json pins it). */
export const CLAUDE_CODE_VERSION = '2.1.328';

/** The variable every process a test's claude starts inherits, so the test can find them all. */
const RUN_MARKER_ENV = 'DURABLE_BASH_TEST_CLAUDE_RUN';

/** How long processes a claude started may take to end after it was killed. */
const LEFT_PROCESSES_GRACE_MS = 5_000;

/**
 * The native binary's path, or why there is none. Read from the platform package itself (the
 * wrapper's optional dependency for this platform), not from the wrapper's `bin/claude.exe`: that
 * is a stub until the wrapper's postinstall links the binary over it, and an install that skips
 * scripts leaves the stub.
 */
export function claudeCodeBinary(): { path: string } | { missing: string } {
  const require = createRequire(import.meta.url);
  let wrapperManifest: string;
  try {
    wrapperManifest = require.resolve('@anthropic-ai/claude-code/package.json');
  } catch {
    return { missing: '@anthropic-ai/claude-code is not installed (npm ci)' };
  }
  const platformPackage = `@anthropic-ai/claude-code-${platformKey()}`;
  try {
    const manifest = createRequire(wrapperManifest).resolve(`${platformPackage}/package.json`);
    const binary = process.platform === 'win32' ? 'claude.exe' : 'claude';
    return { path: path.join(path.dirname(manifest), binary) };
  } catch {
    return { missing: `${platformPackage}, the optional dependency with the binary, is not installed` };
  }
}

/** The wrapper's name for this platform: `linux-x64`, `linux-x64-musl`, `darwin-arm64`, ... */
function platformKey(): string {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const musl = process.platform === 'linux' && report?.header?.glibcVersionRuntime === undefined;
  return `${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
}

/**
 * Whether a file's tests skip: only when the binary is missing outside CI. Under `CI=true` they
 * run, and fail on the missing binary.
 */
export function skipWithoutClaudeCode(): boolean {
  return 'missing' in claudeCodeBinary() && process.env.CI !== 'true';
}

/** How a claude process ended, and everything it printed. */
export interface ClaudeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A claude process still running. */
export interface ClaudeProcess {
  child: ChildProcess;
  /** Writes one line to its stdin (a stream-json message, with `--input-format stream-json`). */
  send(message: unknown): void;
  /** What it printed on stdout so far. */
  stdout(): string;
  /** Resolves when it has exited and its output has ended. */
  done: Promise<ClaudeRun>;
  /** SIGKILLs it and everything in its process group, as a crash would. */
  crash(): void;
}

export interface ClaudeSpawnOptions {
  /** @default the test's home */
  cwd?: string;
  /** Over the harness's environment. */
  env?: NodeJS.ProcessEnv;
  /** Keep stdin open for `send` (stream-json input); else stdin is closed at once. */
  keepStdinOpen?: boolean;
}

export interface ClaudeCode {
  /** The test's own home (HOME, and claude's config under it); fresh for each test. */
  readonly home: string;
  /** Starts `claude <args>` against `apiUrl`. */
  spawn(apiUrl: string, args: string[], options?: ClaudeSpawnOptions): ClaudeProcess;
  /** Runs `claude <args>` against `apiUrl` to its end. */
  run(apiUrl: string, args: string[], options?: ClaudeSpawnOptions): Promise<ClaudeRun>;
  /**
   * The environment `spawn` gives claude, for a claude started otherwise (the Agent SDK's `env`):
   * its processes are then found and ended after the test as `spawn`'s are.
   */
  env(apiUrl: string): Record<string, string>;
}

/**
 * Claude for the calling file: each test gets a fresh home, and after it every process group it
 * started is SIGKILLed; a process that any of them started and that outlives that (found by a
 * variable only this test's processes carry) fails the test.
 */
export function useClaudeCode(): ClaudeCode {
  let home = '';
  let marker = '';
  const groups: number[] = [];

  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-claude-home-'));
    marker = randomUUID();
  });
  afterEach(async () => {
    for (const pid of groups.splice(0)) killGroup(pid);
    const left = await processesLeft(marker);
    for (const { pid } of left) killQuietly(pid);
    removeDir(home);
    if (left.length > 0)
      throw new Error(`processes a claude started outlived it: ${left.map(({ args }) => args).join('; ')}`);
  });

  const claude: ClaudeCode = {
    get home() {
      return home;
    },

    spawn(apiUrl, args, options = {}) {
      const binary = claudeCodeBinary();
      if ('missing' in binary) throw new Error(`cannot run claude: ${binary.missing}`);
      const child = spawn(binary.path, args, {
        cwd: options.cwd ?? home,
        env: { ...harnessEnv(home, apiUrl), [RUN_MARKER_ENV]: marker, ...options.env },
        // A group of its own: the test ends it, and what it started, and nothing else.
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      if (child.pid !== undefined) groups.push(child.pid);
      if (options.keepStdinOpen !== true) child.stdin?.end();
      let stdout = '';
      let stderr = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const done = new Promise<ClaudeRun>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
      });
      return {
        child,
        send: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
        stdout: () => stdout,
        done,
        crash: () => {
          if (child.pid !== undefined) killGroup(child.pid);
        },
      };
    },

    run: (apiUrl, args, options) => claude.spawn(apiUrl, args, options).done,

    env: (apiUrl) => {
      const env: Record<string, string> = { [RUN_MARKER_ENV]: marker };
      for (const [name, value] of Object.entries(harnessEnv(home, apiUrl)))
        if (value !== undefined) env[name] = value;
      return env;
    },
  };
  return claude;
}

/**
 * The environment claude runs in: nothing of the test's own (no real credentials, no settings),
 * the scripted API, no telemetry or other traffic, and the home given.
 */
function harnessEnv(home: string, apiUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'test',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // claude refuses --dangerously-skip-permissions as root unless it is told it runs in a sandbox.
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
  };
}

/** The processes whose environment carries `marker`, once those still ending had their grace. */
async function processesLeft(marker: string): Promise<Array<{ pid: number; args: string }>> {
  const deadline = Date.now() + LEFT_PROCESSES_GRACE_MS;
  for (;;) {
    const left = processesMarked(marker);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function processesMarked(marker: string): Array<{ pid: number; args: string }> {
  const needle = `${RUN_MARKER_ENV}=${marker}`;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        if (!readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(needle)) return [];
        const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
        return [{ pid: Number(name), args }];
      } catch {
        return []; // gone meanwhile, or not ours to read
      }
    });
}

function killGroup(pid: number): void {
  killQuietly(-pid);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
