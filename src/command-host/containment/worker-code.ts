/**
 * The worker's own code on its host: what a session must never change, even where its workdir holds
 * it (`durable-bash dev` in the project that installed the package, or in its checkout). A session
 * that rewrote these would run as the worker at the worker's next start.
 */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What of the package's own directory is code the worker (or `dev`) runs, or installs it. */
const PACKAGE_CODE = ['dist', 'src', 'supervisor', 'scripts', 'package.json', '.temporal', '.node24'];

/**
 * The real paths of the worker's code: the package's code (see PACKAGE_CODE), every `node_modules`
 * the package resolves its dependencies from, and the installation of the Node.js it runs on; none
 * inside another of them.
 */
export function workerCodeDirs(): string[] {
  // This file lies in <package>/{dist,src}/command-host/containment.
  const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const found = PACKAGE_CODE.map((name) => path.join(packageDir, name));
  for (let dir = packageDir; ; dir = path.dirname(dir)) {
    found.push(path.join(dir, 'node_modules'));
    if (dir === path.dirname(dir)) break;
  }
  // <prefix>/bin/node: the prefix holds its libraries and npm too.
  found.push(path.dirname(path.dirname(process.execPath)));
  const real = [...new Set(found.filter((file) => existsSync(file)).map((file) => realpathSync(file)))];
  // The outermost only: a package installed in a project lies in its node_modules, kept as one.
  return real.filter((dir) => !real.some((other) => other !== dir && dir.startsWith(`${other}/`)));
}
