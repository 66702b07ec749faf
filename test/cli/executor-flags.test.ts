/** `durable-bash worker`'s executor flags (src/cli/executor-flags.ts): isolation, environment and deny rules. */
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

describe("durable-bash worker's isolation flags", () => {
  it('takes the allowed host ports and the way out turned off', () => {
    expect(parse(['--allow-host-port', '5432', '--allow-host-port', '6379', '--no-session-egress'])).toEqual({
      isolation: 'auto',
      sandbox: 'none',
      containment: 'auto',
      isolationAllowedPorts: [5432, 6379],
      isolationEgress: false,
    });
    expect(parse([])).not.toHaveProperty('isolationEgress');
  });

  it('refuses what is not a port, in one line', () => {
    for (const bad of ['0', '65536', 'postgres', '80x'])
      expect(() => parse(['--allow-host-port', bad])).toThrow(
        `option '--allow-host-port <port>' argument '${bad}' is invalid. expected a port from 1 to 65535, got ${bad}`,
      );
  });
});

describe("durable-bash worker's environment flags", () => {
  it('turns the non-interactive defaults off', () => {
    expect(parse(['--no-non-interactive-defaults'])).toMatchObject({ nonInteractiveDefaults: false });
    expect(parse([])).not.toHaveProperty('nonInteractiveDefaults');
  });
});

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
