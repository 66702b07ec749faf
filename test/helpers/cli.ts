/** `durable-bash` as users run it: the built bin, in a child process. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/** The built bin (`npm test` and `npm run bench` build first). */
export const CLI_BIN = path.resolve('dist/cli/main.js');

const execFileAsync = promisify(execFile);

/** How a run of the CLI ended: its exit code and everything it printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `durable-bash <args>` to its end, with `env` over `base` (this process's environment) as its
 * environment. A non-zero exit is an answer, not a throw.
 */
export async function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  base: NodeJS.ProcessEnv = process.env,
): Promise<CliRun> {
  try {
    const { stdout, stderr } = await execFileAsync('node', [CLI_BIN, ...args], { env: { ...base, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
