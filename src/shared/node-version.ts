/**
 * The Node.js an entry point needs, checked when it is imported: the framework entry points need
 * newer Node.js than the rest of the package (Node.js 20), and say so in one line.
 */

/**
 * Throws when `version` (the running Node.js's, `process.versions.node`) is older than `major`:
 * `<entry> needs Node.js <major> or later (this is Node.js <version>); the rest of durable-bash runs on Node.js 20`.
 */
export function requireNode(entry: string, major: number, version: string = process.versions.node): void {
  const running = Number.parseInt(version, 10);
  if (running >= major) return;
  throw new Error(
    `${entry} needs Node.js ${major} or later (this is Node.js ${version}); the rest of durable-bash runs on Node.js 20`,
  );
}
