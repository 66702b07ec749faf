/** The child's environment: the worker's, less Temporal credentials and configured secrets. */
export function commandEnv(
  secretEnv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const secrets = new Set(secretEnv);
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.startsWith('TEMPORAL_') && !secrets.has(name)),
  );
}
