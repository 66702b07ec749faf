/** Finding a program the worker runs on its host (bwrap, slirp4netns) as a shell would. */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** `name` itself when it holds a `/`, else the first executable `name` on PATH; undefined when there is none. */
export function executablePath(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (process.env.PATH ?? '').split(':').map((dir) => path.join(dir || '.', name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // Next.
    }
  }
  return undefined;
}
