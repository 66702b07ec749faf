/**
 * The tracing example of docs/OPERATIONS.md, run as a user runs it: one `bash` call is one trace,
 * from the tool's span through the workflow to the command activity.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('examples/tracing.mjs', () => {
  it('prints one trace from the tool call through the workflow to the command activity', () => {
    const out = execFileSync('node', ['examples/tracing.mjs'], {
      encoding: 'utf8',
      env: { ...process.env, DURABLE_BASH_TEST_ADDRESS: '' },
      timeout: 120_000,
    });
    expect(out.slice(out.indexOf('bash answered:'))).toBe(
      [
        'bash answered: "traced\\n"',
        '',
        '7 spans in 1 trace:',
        '  durable-bash.bash',
        '    StartWorkflow:bashTask',
        '      RunWorkflow:bashTask',
        '        StartActivity:resolveCommand',
        '          RunActivity:resolveCommand',
        '        StartActivity:runCommand',
        '          RunActivity:runCommand',
        '',
      ].join('\n'),
    );
  });
});
