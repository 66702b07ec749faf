import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The two Temporal server binaries durable-bash runs against. */
export const TemporalBinary = {
  /** The Temporal CLI, for `temporal server start-dev`. */
  cli: { file: 'temporal', envVar: 'DURABLE_BASH_TEMPORAL_CLI' },
  /** The native time-skipping test server. */
  testServer: { file: 'temporal-test-server', envVar: 'DURABLE_BASH_TEMPORAL_TEST_SERVER' },
} as const;
export type TemporalBinary = (typeof TemporalBinary)[keyof typeof TemporalBinary];

/** Where a binary was found; `download` means none is here and the SDK's own download is the fallback. */
export type BinarySource = { kind: 'env' | 'project-cache' | 'path'; path: string } | { kind: 'download' };

/** The package root: two levels above this file in both `src/` and `dist/`. */
export const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The script that installs the binaries into the project cache. */
export const provisionScript = path.join(packageRoot, 'scripts', 'provision-temporal.sh');

export function projectCacheDir(): string {
  return path.join(process.env.DURABLE_BASH_TEMPORAL_DIR ?? path.join(packageRoot, '.temporal'), 'bin');
}

/**
 * Finds a binary: its environment variable, then the project cache that `npm run provision` fills,
 * then PATH. A variable that names a missing file is an error, not a silent fallback.
 */
export function findTemporalBinary(binary: TemporalBinary): BinarySource {
  const fromEnv = process.env[binary.envVar];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${binary.envVar}=${fromEnv} is not an executable file`);
    return { kind: 'env', path: fromEnv };
  }
  const cached = path.join(projectCacheDir(), binary.file);
  if (isExecutable(cached)) return { kind: 'project-cache', path: cached };
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, binary.file);
    if (dir && isExecutable(candidate)) return { kind: 'path', path: candidate };
  }
  return { kind: 'download' };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return existsSync(file);
  } catch {
    return false;
  }
}
