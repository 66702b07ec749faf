/** The session of an MCP server Claude Code started: its conversation's, from CLAUDE_CODE_SESSION_ID. */
import { describe, expect, it } from 'vitest';
import { claudeCodeSessionId } from '../../src/mcp/session.js';
import { cli } from '../helpers/cli.js';

describe('claudeCodeSessionId', () => {
  it('follows the Claude Code conversation when CLAUDE_CODE_SESSION_ID holds a UUID', () => {
    expect(claudeCodeSessionId({ CLAUDE_CODE_SESSION_ID: 'D9718E04-55E4-4A8A-B5FA-DAFBB62384C0' })).toEqual({
      sessionId: 'claude-code:d9718e04-55e4-4a8a-b5fa-dafbb62384c0',
    });
  });

  it('gives none when the variable is unset or empty', () => {
    expect(claudeCodeSessionId({})).toBeUndefined();
    expect(claudeCodeSessionId({ CLAUDE_CODE_SESSION_ID: '' })).toBeUndefined();
  });

  it('ignores a value that is not a UUID, and says why in one line', () => {
    expect(claudeCodeSessionId({ CLAUDE_CODE_SESSION_ID: 'my session\nnext' })).toEqual({
      ignored: 'ignoring CLAUDE_CODE_SESSION_ID="my session\\nnext": expected a UUID, as Claude Code sets it',
    });
  });
});

describe('durable-bash mcp under an odd CLAUDE_CODE_SESSION_ID', () => {
  it('says in one line on stderr that it ignores the variable', async () => {
    const run = await cli(['mcp', '--address', '127.0.0.1:1'], { CLAUDE_CODE_SESSION_ID: 'not-a-uuid' });
    expect(run.stderr.split('\n')[0]).toBe(
      'durable-bash: ignoring CLAUDE_CODE_SESSION_ID="not-a-uuid": expected a UUID, as Claude Code sets it',
    );
  });
});
