/**
 * Where a timing or size constant lives (docs/ARCHITECTURE.md, "A cadence, a limit, a timeout"):
 * in src/shared/limits.ts when more than one file uses it, else at the top of the one file whose
 * mechanism it tunes, unexported. Either way it is named with its unit and says why its value is
 * what it is, in a comment just above it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');
const LIMITS = path.join(SRC, 'shared/limits.ts');
const UNIT = /^(?:export )?const ([A-Z][A-Z0-9_]*_(?:MS|BYTES|ATTEMPTS|CHARS|LINES|SECONDS|ROWS|COLS))\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.c?ts$/.test(entry.name) ? [full] : [];
  });
}

interface Constant {
  name: string;
  file: string;
  exported: boolean;
  commented: boolean;
}

function constants(): Constant[] {
  return sourceFiles(SRC).flatMap((file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    return lines.flatMap((line, i) => {
      const m = line.match(UNIT);
      if (!m) return [];
      const above = lines[i - 1]?.trim() ?? '';
      return [
        {
          name: m[1] as string,
          file: path.relative(SRC, file),
          exported: line.startsWith('export '),
          commented: above.endsWith('*/') || above.startsWith('//'),
        },
      ];
    });
  });
}

describe('timing and size constants', () => {
  const all = constants();

  it('live in shared/limits.ts when exported, else in the one file that uses them', () => {
    const exportedElsewhere = all.filter((c) => c.exported && c.file !== path.relative(SRC, LIMITS));
    expect(exportedElsewhere.map((c) => `${c.file}: ${c.name}`)).toEqual([]);
  });

  it('each say why their value is what it is, in a comment just above', () => {
    expect(all.filter((c) => !c.commented).map((c) => `${c.file}: ${c.name}`)).toEqual([]);
  });

  it('are defined once', () => {
    const seen = new Map<string, string[]>();
    for (const c of all) seen.set(c.name, [...(seen.get(c.name) ?? []), c.file]);
    expect([...seen].filter(([, files]) => files.length > 1)).toEqual([]);
  });
});
