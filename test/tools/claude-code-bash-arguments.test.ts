/** Claude Code's Bash arguments, mapped onto durable-bash's `bash` call: pure, no server. */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentsError } from '../../src/shared/errors.js';
import {
  CLAUDE_CODE_DEFAULT_TIMEOUT_MS,
  CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS,
  CLAUDE_CODE_MAX_TIMEOUT_MS,
} from '../../src/shared/limits.js';
import { descriptionOf, parseClaudeCodeBashCall } from '../../src/tools/claude-code-bash-arguments.js';

/** The one line a bad call gets. */
function problem(args: unknown): string {
  try {
    parseClaudeCodeBashCall(args);
  } catch (err) {
    if (err instanceof InvalidArgumentsError) return err.message;
    throw err;
  }
  throw new Error(`parsed: ${JSON.stringify(args)}`);
}

describe('parseClaudeCodeBashCall', () => {
  it("maps a foreground call onto durable-bash's, with Claude Code's default timeout", () => {
    expect(parseClaudeCodeBashCall({ command: 'npm test', description: 'Run the tests' })).toEqual({
      command: 'npm test',
      description: 'Run the tests',
      timeoutMs: CLAUDE_CODE_DEFAULT_TIMEOUT_MS,
    });
    expect(
      parseClaudeCodeBashCall({ command: 'make', description: 'Build', timeout: CLAUDE_CODE_MAX_TIMEOUT_MS }),
    ).toEqual({ command: 'make', description: 'Build', timeoutMs: CLAUDE_CODE_MAX_TIMEOUT_MS });
  });

  it('gives a background timeout as the task’s time limit, and none when absent', () => {
    expect(
      parseClaudeCodeBashCall({
        command: 'npm run watch',
        description: 'Watch',
        run_in_background: true,
        timeout: CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS,
      }),
    ).toEqual({
      command: 'npm run watch',
      description: 'Watch',
      run_in_background: true,
      backgroundTimeoutMs: CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS,
    });
    expect(parseClaudeCodeBashCall({ command: 'sleep 9', run_in_background: true })).toEqual({
      command: 'sleep 9',
      description: 'sleep 9',
      run_in_background: true,
    });
  });

  it('takes run_in_background: false and dangerouslyDisableSandbox: false as absent', () => {
    expect(
      parseClaudeCodeBashCall({ command: 'ls', run_in_background: false, dangerouslyDisableSandbox: false }),
    ).toEqual({ command: 'ls', description: 'ls', timeoutMs: CLAUDE_CODE_DEFAULT_TIMEOUT_MS });
  });

  it('makes a missing or blank description from the first line of the command, cut', () => {
    expect(parseClaudeCodeBashCall({ command: '\n  cd src\nmake all', description: ' ' })).toMatchObject({
      description: 'cd src',
    });
    const long = 'x'.repeat(200);
    expect(descriptionOf(long)).toBe(`${'x'.repeat(79)}…`);
    expect(Array.from(descriptionOf(long))).toHaveLength(80);
    expect(descriptionOf('echo 🙂'.repeat(30)).endsWith('…')).toBe(true);
  });

  it('refuses each bad call in one line', () => {
    expect(problem({ command: 'ls', bogus: 1 })).toBe('unknown argument: bogus');
    expect(problem({ command: 'ls', timeoutMs: 5 })).toBe('unknown argument: timeoutMs');
    expect(problem({ description: 'no command' })).toBe(
      'invalid command: expected a non-blank string, got nothing',
    );
    expect(problem({ command: '  ' })).toBe('invalid command: expected a non-blank string, got "  "');
    expect(problem({ command: 'sleep 700', timeout: CLAUDE_CODE_MAX_TIMEOUT_MS + 1 })).toBe(
      `invalid timeout: ${CLAUDE_CODE_MAX_TIMEOUT_MS + 1} is over ${CLAUDE_CODE_MAX_TIMEOUT_MS} ms, the most a foreground command may take; set run_in_background: true to run longer`,
    );
    expect(
      problem({
        command: 'sleep 1',
        run_in_background: true,
        timeout: CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS + 1,
      }),
    ).toBe(
      `invalid timeout: ${CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS + 1} is over ${CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS} ms, the most a background command may be given; leave timeout out to run it until it ends`,
    );
    expect(problem({ command: 'ls', timeout: 0 })).toBe(
      'invalid timeout: expected a positive number of milliseconds, got 0',
    );
    expect(problem({ command: 'ls', timeout: '5000' })).toBe(
      'invalid timeout: expected a positive number of milliseconds, got "5000"',
    );
    expect(problem({ command: 'ls', dangerouslyDisableSandbox: true })).toBe(
      "invalid dangerouslyDisableSandbox: not available: every command runs in its session's isolation, which nothing turns off; call again without it",
    );
    expect(problem({ command: 'ls', run_in_background: 'yes' })).toBe(
      'invalid run_in_background: expected a boolean, got "yes"',
    );
    expect(problem('ls')).toBe('invalid arguments: expected an object, got "ls"');
  });
});
