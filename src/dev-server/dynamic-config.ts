/**
 * Server settings durable-bash's dev server runs with. The history service moves each new
 * workflow or activity task to matching through its transfer queue, whose reader polls a shard at
 * most 20 times a second by default: after the first burst, every such hand-off waits up to 50 ms,
 * and a foreground run has two of them. Raising the limit took a trivial foreground run from
 * ~100 ms to ~33 ms on the dev server (docs/PERFORMANCE.md). A cluster sets the same keys in its
 * dynamic config file (see docker-compose.yml).
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.transferProcessorMaxPollHostRPS': 1000,
  // Visibility calls a namespace may make a second (default 10): each worker's closed-run check and
  // each background start's quota listing are visibility calls.
  'frontend.namespaceRPS.visibility': 100,
};

/** The settings as `temporal server start-dev` flags. */
export function dynamicConfigArgs(
  config: Readonly<Record<string, number>> = DEV_SERVER_DYNAMIC_CONFIG,
): string[] {
  return Object.entries(config).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]);
}

/**
 * SQLite settings of a dev server on a database file: the write-ahead log, and no fsync (the pragmas
 * Temporal's own TypeScript CI runs its dev server with). The dev server keeps all state in one
 * SQLite connection, and with the default rollback journal each history write waits for fsyncs; a
 * burst of starts queues behind them. What it costs: a crash of the server process loses nothing
 * (its writes are in the OS's page cache, and the WAL replays), but an OS crash or power loss can
 * lose the latest transactions or leave the database unusable. `durable-bash dev` is for one
 * machine's development; a deployment runs a real cluster (docs/CLUSTER.md).
 */
export const DEV_SERVER_SQLITE_PRAGMAS: readonly string[] = ['journal_mode=WAL', 'synchronous=OFF'];

/** The pragmas as `temporal server start-dev` flags. */
export function sqlitePragmaArgs(pragmas: readonly string[] = DEV_SERVER_SQLITE_PRAGMAS): string[] {
  return pragmas.flatMap((pragma) => ['--sqlite-pragma', pragma]);
}
