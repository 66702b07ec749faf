/**
 * A private copy of the built package for one run. Workers and the agent host are restarted many
 * times during a run; if they loaded the shared dist/ and someone rebuilt it meanwhile, a restarted
 * worker would replay old histories with new workflow code and report nondeterminism that is no
 * defect of either version. So every process of the run loads this copy, taken once at the start.
 */
import { cpSync, existsSync, symlinkSync } from 'node:fs';
import path from 'node:path';

const NEEDED = ['index.js', 'cli/main.js', 'workflows/bundle.js', 'dev-server/dynamic-config.js'];

/** Copies dist/ into `<runDir>/pkg/dist` (with node_modules linked) and returns the copy's dist dir. */
export function snapshotDist(runDir, source = path.resolve('dist')) {
  const missing = NEEDED.filter((file) => !existsSync(path.join(source, file)));
  if (missing.length > 0) throw new Error(`dist/ lacks ${missing.join(', ')}: run npm run build`);
  const pkg = path.join(runDir, 'pkg');
  const dist = path.join(pkg, 'dist');
  cpSync(source, dist, { recursive: true });
  // The package's own manifest: dist/ is ESM by its "type", and the CLI reads its version there.
  // Its imports of @temporalio/* resolve through the node_modules link.
  cpSync(path.join(path.dirname(source), 'package.json'), path.join(pkg, 'package.json'));
  symlinkSync(path.resolve('node_modules'), path.join(pkg, 'node_modules'));
  return dist;
}
