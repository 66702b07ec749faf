/**
 * The package as a user gets it: `npm pack`, installed into an empty project with
 * `npm install ./durable-bash-<version>.tgz`, runs docs/LIBRARY.md's first example there, word for
 * word but for the server's address and the session's working directory; and a TypeScript user of
 * AI SDK 6 compiles against its published types (`skipLibCheck` off).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevServerEnv } from '../helpers/temporal-env.js';

const execFileAsync = promisify(execFile);
const root = path.resolve('.');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };

/** The first TypeScript block of docs/LIBRARY.md: the worker and the tools, as the doc shows them. */
function libraryExample(): string {
  const doc = readFileSync(path.join(root, 'docs/LIBRARY.md'), 'utf8');
  const block = doc.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (block === undefined) throw new Error('docs/LIBRARY.md has no ts block');
  return block;
}

describe('the packed package', () => {
  let env: TestWorkflowEnvironment;
  const project = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-consumer-')));

  beforeAll(async () => {
    env = await createDevServerEnv();
  });
  afterAll(async () => {
    await env?.teardown();
    rmSync(project, { recursive: true, force: true });
  });

  it('installs into an empty project and runs the LIBRARY.md example there', async () => {
    const packed = await execFileAsync('npm', ['pack', '--json', '--pack-destination', project], {
      cwd: root,
    });
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    expect(filename).toBe(`durable-bash-${version}.tgz`);

    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2),
    );
    await execFileAsync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'error', `./${filename}`],
      { cwd: project },
    );

    // TypeScript's types aside, the example is plain JavaScript: run it as a module.
    const example = libraryExample()
      .replaceAll("'localhost:7233'", `'${env.address}'`)
      .replaceAll("'/work'", `'${project}'`);
    writeFileSync(
      path.join(project, 'example.mjs'),
      `${example}
console.log(result.content.map((block) => block.text).join(''));
worker.shutdown();
await client.connection.close();
`,
    );
    writeFileSync(path.join(project, 'listed.txt'), '');
    const run = await execFileAsync('node', ['example.mjs'], { cwd: project, timeout: 60_000 });
    expect(run.stdout.split('\n')).toContain('listed.txt');
    expect(run.stdout).toContain('package.json');
  });

  it("compiles a TypeScript user's createAiSdkTools call on AI SDK 6, with skipLibCheck off", async () => {
    await execFileAsync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'error', 'ai@6.0.326'],
      { cwd: project },
    );
    writeFileSync(
      path.join(project, 'ai-sdk-6.ts'),
      `import type { Client } from '@temporalio/client';
import { generateText, type LanguageModel } from 'ai';
import { createAiSdkTools, createDurableBashSandbox } from 'durable-bash/ai-sdk';
declare const client: Client;
declare const model: LanguageModel;
const tools = createAiSdkTools({ client, taskQueue: 'q' });
export const run = generateText({ model, tools, prompt: 'x', experimental_context: { sessionId: 's' } });
export const sandbox = createDurableBashSandbox({ client, taskQueue: 'q' });
`,
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
        },
        files: ['ai-sdk-6.ts'],
      }),
    );
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const compiled = await execFileAsync(process.execPath, [tsc, '-p', '.'], { cwd: project }).catch(
      (err: { stdout: string }) => err,
    );
    // @temporalio/common's own types import 'ms', whose types it does not depend on: not ours to judge.
    const errors = compiled.stdout
      .split('\n')
      .filter((line) => /error TS/.test(line) && !/@temporalio\//.test(line));
    expect(errors).toEqual([]);
  }, 60_000);
});
