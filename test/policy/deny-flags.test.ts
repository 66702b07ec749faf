import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { type ExecutorFlags, executorOptions, withExecutorOptions } from '../../src/cli/executor-flags.js';

function parse(args: string[]) {
  const command = withExecutorOptions(new Command())
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  command.parse(args, { from: 'user' });
  return executorOptions(command.opts<ExecutorFlags>());
}

describe('durable-bash worker --deny', () => {
  it('collects repeated rules: a prefix, or a /regex/', () => {
    expect(parse(['--deny', 'rm -rf', '--deny', '/curl .*\\| *sh/i']).denyCommands).toEqual([
      { prefix: 'rm -rf' },
      { pattern: /curl .*\| *sh/i },
    ]);
    expect(parse([]).denyCommands).toBeUndefined();
  });

  it('refuses an empty rule', () => {
    expect(() => parse(['--deny', ''])).toThrow(
      "option '--deny <rule>' argument '' is invalid. invalid deny rule: expected a command prefix or /regex/, got an empty string",
    );
  });
});
