/**
 * The layer check of `npm run lint` (.dependency-cruiser.cjs over scripts/layers.cjs): that
 * docs/ARCHITECTURE.md draws and lists the same floors, and that the check fails, naming both
 * files, when a copy of src/ gets an import that points up, a cycle, or a Node built-in in
 * workflow code. The real tree passing is `npm run lint`'s own job (and CI's).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);
const root = path.resolve('.');
const { FLOORS, WORKFLOW_CODE } = createRequire(import.meta.url)('../../scripts/layers.cjs') as {
  FLOORS: string[][];
  WORKFLOW_CODE: string[];
};
const architecture = readFileSync(path.join(root, 'docs/ARCHITECTURE.md'), 'utf8');

describe('docs/ARCHITECTURE.md', () => {
  it("lists the checker's floors in its table, folder by folder", () => {
    const rows = [...architecture.matchAll(/^\| (\d+) +\| `([a-z-]+)` +\|/gm)].map((m) => ({
      floor: Number(m[1]),
      folder: m[2] as string,
    }));
    const table = FLOORS.map((_, floor) =>
      rows.filter((row) => row.floor === floor).map((row) => row.folder),
    );
    expect(table).toEqual(FLOORS);
    expect(rows).toHaveLength(FLOORS.flat().length);
  });

  it("draws the checker's floors in its diagram", () => {
    const diagram = architecture.match(/```\n([\s\S]*?)```/)?.[1] ?? '';
    const drawn: string[][] = [];
    for (const line of diagram.split('\n')) {
      const m = line.match(/^([a-z -]+?) {2,}(\d+) {2}/);
      if (m) drawn[Number(m[2])] = (m[1] as string).trim().split(/\s+/);
    }
    expect(drawn).toEqual(FLOORS);
  });

  it('names the folders of workflow code the checker selects', () => {
    const named = architecture.match(/\*\*Workflow code\*\* is ([^.]*)\./)?.[1] ?? '';
    expect([...named.matchAll(/`src\/([a-z-]+)`/g)].map((m) => m[1])).toEqual(WORKFLOW_CODE);
  });
});

describe('the layer check', () => {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-layers-'));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('fails on an import that points up, a cycle, and a Node built-in in workflow code, naming the files', async () => {
    for (const entry of [
      'src',
      'scripts/layers.cjs',
      '.dependency-cruiser.cjs',
      'tsconfig.json',
      'package.json',
    ])
      cpSync(path.join(root, entry), path.join(copy, entry), { recursive: true });
    symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
    // A back arrow: the bottom floor imports a tool.
    writeFileSync(
      path.join(copy, 'src/shared/planted-up.ts'),
      "import { createBashTool } from '../tools/bash.js';\nexport const planted = createBashTool;\n",
    );
    // A cycle inside one folder.
    writeFileSync(
      path.join(copy, 'src/policy/planted-a.ts'),
      "import { b } from './planted-b.js';\nexport const a = () => b;\n",
    );
    writeFileSync(
      path.join(copy, 'src/policy/planted-b.ts'),
      "import { a } from './planted-a.js';\nexport const b = () => a;\n",
    );
    // Workflow code reaching for the file system.
    writeFileSync(
      path.join(copy, 'src/workflows/planted-io.ts'),
      "import { readFileSync } from 'node:fs';\nexport const io = readFileSync;\n",
    );

    const run = await execFileAsync(path.join(root, 'node_modules/.bin/depcruise'), ['src'], {
      cwd: copy,
    }).then(
      () => ({ code: 0, output: '' }),
      (err: { code: number; stdout: string }) => ({ code: err.code, output: err.stdout }),
    );
    const output = run.output.replace(/\s+/g, ' ');

    expect(run.code).not.toBe(0);
    expect(output).toContain('error layer-shared: src/shared/planted-up.ts → src/tools/bash.ts');
    expect(output).toMatch(/error no-cycle: src\/policy\/planted-(a|b)\.ts → src\/policy\/planted-(b|a)\.ts/);
    expect(output).toContain('error workflow-code-no-node-builtins: src/workflows/planted-io.ts → fs');
    expect(output).toContain('src/tools/bash.ts');
  });
});
