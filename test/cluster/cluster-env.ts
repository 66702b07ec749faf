/**
 * A production-shaped Temporal cluster for the cluster tests: a private PostgreSQL (persistence and
 * SQL visibility, with the schemas applied by temporal-sql-tool) and a `temporal-server` running
 * frontend, history, matching and worker services, with the dynamic config docker-compose uses
 * (deploy/dynamicconfig.yaml) and Prometheus metrics. Everything lives in one scratch directory
 * and listens on free loopback ports; nothing touches a system-wide PostgreSQL or Temporal.
 * `scripts/provision-cluster.sh` provides the binaries; a missing one is an error naming it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import Long from 'long';
import { registerSearchAttributes } from '../../src/client/register-search-attributes.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../../src/shared/search-attributes.js';

export interface ClusterOptions {
  /** Extra dynamic config keys, on top of deploy/dynamicconfig.yaml's. */
  dynamicConfig?: Readonly<Record<string, unknown>>;
  /** @default 4 */
  numHistoryShards?: number;
}

export interface Cluster {
  /** The frontend's gRPC address, host:port. */
  address: string;
  namespace: 'default';
  /** The server's Prometheus endpoint. */
  metricsUrl: string;
  /** The private PostgreSQL: loopback host and port, and its (trusted) superuser. */
  postgres: { host: '127.0.0.1'; port: number; user: string; password: string };
  /** The pid of the running temporal-server process. */
  serverPid(): number;
  /** The last lines the server logged (for a failure's message). */
  serverLogTail(lines?: number): string;
  /**
   * SIGKILLs the temporal-server process (only it), runs `whileDown` if given (the server is gone
   * meanwhile), and starts it again on the same database and ports; resolves once it serves.
   */
  restartServer(options?: { whileDown?: () => Promise<void> }): Promise<void>;
  /** Stops the server and PostgreSQL, removes the scratch directory, and fails if any process is left. */
  stop(): Promise<void>;
}

const PROVISION = 'bash scripts/provision-cluster.sh';
const DB_USER = 'temporal';
const DB_PASSWORD = 'temporal';
const READY_TIMEOUT_MS = 120_000;

export function clusterDir(): string {
  return process.env.DURABLE_BASH_CLUSTER_DIR ?? path.join(os.homedir(), '.cache/durable-bash/cluster');
}

/** The provisioned binaries and schema; a missing piece fails with the command that provides it (CI or not). */
function findBinaries() {
  const dir = clusterDir();
  const found = {
    server: path.join(dir, 'bin/temporal-server'),
    sqlTool: path.join(dir, 'bin/temporal-sql-tool'),
    schema: path.join(dir, 'schema/postgresql/v12'),
    pgBin: postgresBinDir(),
  };
  const missing = [found.server, found.sqlTool, path.join(found.schema, 'temporal/schema.sql')].filter(
    (file) => !existsSync(file),
  );
  if (found.pgBin === undefined) missing.push('PostgreSQL (/usr/lib/postgresql/<major>/bin)');
  if (missing.length > 0) {
    throw new Error(`cluster test: missing ${missing.join(', ')} (run: ${PROVISION}); it never skips`);
  }
  return found as typeof found & { pgBin: string };
}

function postgresBinDir(): string | undefined {
  if (process.env.DURABLE_BASH_PG_BIN) return process.env.DURABLE_BASH_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((name) => existsSync(path.join(root, name, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : path.join(root, majors[0], 'bin');
}

/**
 * Free loopback ports, all held open at once so none is handed out twice. Below 32768: the SQL
 * schema keeps a membership port in a SMALLINT (and Linux hands out ephemeral ports above it).
 */
async function freePorts(count: number): Promise<number[]> {
  const held: net.Server[] = [];
  while (held.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) held.push(server);
  }
  const ports = held.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

function run(file: string, args: string[], options: { asPostgres?: boolean } = {}): string {
  // PostgreSQL refuses to run as root: as root, its tools run as the postgres user.
  const [command, argv] =
    options.asPostgres && process.getuid?.() === 0
      ? ['runuser', ['-u', 'postgres', '--', file, ...args]]
      : [file, args];
  try {
    return execFileSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${[command, ...argv].join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Whether `pid` is a live process (a zombie waiting for its parent to reap it is not). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Retries `attempt` until it succeeds, or fails after `timeoutMs` or as soon as `fatal` says why. */
async function until<T>(
  what: string,
  attempt: () => Promise<T>,
  timeoutMs = READY_TIMEOUT_MS,
  fatal: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      last = err;
    }
    const reason = fatal();
    if (reason !== '' || Date.now() > deadline) {
      throw new Error(
        `cluster: ${what} not ready${reason === '' ? ` in ${timeoutMs}ms` : ''}: ${String(last)}${reason}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** gRPC ALREADY_EXISTS */
const ALREADY_EXISTS = 6;

function serverConfig(ports: Record<string, number>, dynamicConfigFile: string, shards: number): string {
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "127.0.0.1:${ports.postgres}"
        connectProtocol: tcp
        user: ${DB_USER}
        password: ${DB_PASSWORD}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (name: string) => `
  ${name}:
    rpc:
      grpcPort: ${ports[`${name}Grpc`]}
      membershipPort: ${ports[`${name}Membership`]}
      bindOnIP: 127.0.0.1${name === 'frontend' ? `\n      httpPort: ${ports.frontendHttp}` : ''}`;
  return `# Written by test/cluster/cluster-env.ts.
log:
  stdout: true
  level: warn
persistence:
  numHistoryShards: ${shards}
  defaultStore: default
  visibilityStore: visibility
  datastores:
    default:${store('temporal', 20)}
    visibility:${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  pprof:
    port: 0
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: "127.0.0.1:${ports.metrics}"
services:${['frontend', 'history', 'matching', 'worker'].map(service).join('')}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:${ports.frontendGrpc}"
      httpAddress: "127.0.0.1:${ports.frontendHttp}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "${dynamicConfigFile}"
  pollInterval: 10s
`;
}

/** deploy/dynamicconfig.yaml (what docker-compose mounts), then the test's own keys. */
function dynamicConfig(extra: Readonly<Record<string, unknown>>): string {
  const deployed = readFileSync(path.resolve('deploy/dynamicconfig.yaml'), 'utf8');
  const added = Object.entries(extra).map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`);
  return `${deployed.trimEnd()}\n${added.join('')}`;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const bins = findBinaries();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-cluster-'));
  chmodSync(scratch, 0o755); // The postgres user must reach its directories inside.
  const pgData = path.join(scratch, 'pg-data');
  const pgSocket = path.join(scratch, 'pg-socket');
  const configDir = path.join(scratch, 'config');
  const serverLog = path.join(scratch, 'temporal-server.log');
  const pgLog = path.join(scratch, 'postgresql.log');
  mkdirSync(configDir);
  const names = [
    'postgres',
    'frontendGrpc',
    'frontendHttp',
    'frontendMembership',
    'historyGrpc',
    'historyMembership',
    'matchingGrpc',
    'matchingMembership',
    'workerGrpc',
    'workerMembership',
    'metrics',
  ];
  const ports = Object.fromEntries(
    (await freePorts(names.length)).map((port, i) => [names[i], port]),
  ) as Record<string, number>;

  let postmasterPid: number | undefined;
  let server: ChildProcess | undefined;
  let connection: Connection | undefined;

  const stopPostgres = () => {
    if (postmasterPid === undefined) return;
    try {
      run(path.join(bins.pgBin, 'pg_ctl'), ['stop', '-D', pgData, '-m', 'fast', '-w', '-t', '30'], {
        asPostgres: true,
      });
    } catch {
      if (isAlive(postmasterPid)) process.kill(postmasterPid, 'SIGKILL');
    }
  };

  const killServer = async () => {
    const child = server;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    process.kill(-child.pid, 'SIGKILL'); // Its own process group: only what this harness started.
    await exited;
  };

  const startServer = async () => {
    const log = openSync(serverLog, 'a');
    server = spawn(
      bins.server,
      ['--config-file', path.join(configDir, 'temporal.yaml'), '--allow-no-auth', 'start'],
      {
        detached: true,
        stdio: ['ignore', log, log],
      },
    );
    closeSync(log);
    const child = server;
    const exitedEarly = () =>
      child.exitCode !== null || child.signalCode !== null
        ? `\ntemporal-server exited (${child.exitCode ?? child.signalCode})`
        : '';
    await until(
      'the frontend',
      async () => {
        connection ??= await Connection.connect({
          address: `127.0.0.1:${ports.frontendGrpc}`,
          connectTimeout: 2_000,
        });
        await connection.healthService.check({});
      },
      READY_TIMEOUT_MS,
      exitedEarly,
    );
  };

  /** Until a workflow that sets both search attributes starts (and is listed by them) on `default`. */
  const probe = async () => {
    const client = new Client({ connection: connection as Connection, namespace: 'default' });
    const probeId = `cluster-probe-${Date.now()}`;
    await until('a workflow start on the default namespace', async () => {
      await client.workflow.start('clusterProbe', {
        workflowId: probeId,
        taskQueue: 'cluster-probe',
        typedSearchAttributes: [
          { key: ownerSearchAttribute, value: 'cluster-probe' },
          { key: statusSearchAttribute, value: 'probe' },
        ],
      });
    }).catch(async (err) => {
      if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return;
      throw err;
    });
    await until('visibility', async () => {
      for await (const execution of client.workflow.list({ query: `BashTaskOwner = 'cluster-probe'` })) {
        if (execution.workflowId === probeId) return;
      }
      throw new Error('the probe is not listed yet');
    });
    await client.workflow.getHandle(probeId).terminate('cluster probe');
  };

  const cleanUp = async () => {
    await connection?.close().catch(() => undefined);
    connection = undefined;
    await killServer();
    stopPostgres();
    rmSync(scratch, { recursive: true, force: true });
  };

  try {
    // PostgreSQL, as its own user, on a private data directory, socket directory and loopback port.
    mkdirSync(pgData, { mode: 0o700 });
    mkdirSync(pgSocket, { mode: 0o700 });
    writeFileSync(pgLog, '');
    if (process.getuid?.() === 0) {
      const postgres = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const group = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      for (const dir of [pgData, pgSocket, pgLog]) chownSync(dir, postgres, group);
    }
    run(
      path.join(bins.pgBin, 'initdb'),
      ['-D', pgData, '-U', DB_USER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { asPostgres: true },
    );
    const settings = [
      `-c listen_addresses=127.0.0.1`,
      `-c port=${ports.postgres}`,
      `-c unix_socket_directories=${pgSocket}`,
      // Each service of the server keeps its own connection pools.
      `-c max_connections=300`,
    ].join(' ');
    run(
      path.join(bins.pgBin, 'pg_ctl'),
      ['start', '-D', pgData, '-l', pgLog, '-w', '-t', '60', '-o', settings],
      {
        asPostgres: true,
      },
    );
    postmasterPid = Number(readFileSync(path.join(pgData, 'postmaster.pid'), 'utf8').split('\n')[0]);

    // The schemas, as Temporal's own tooling applies them.
    const sqlTool = (database: string, ...args: string[]) =>
      run(bins.sqlTool, [
        '--ep',
        '127.0.0.1',
        '-p',
        String(ports.postgres),
        '-u',
        DB_USER,
        '--pw',
        DB_PASSWORD,
        '--pl',
        'postgres12',
        '--db',
        database,
        ...args,
      ]);
    for (const [database, schema] of [
      ['temporal', 'temporal'],
      ['temporal_visibility', 'visibility'],
    ] as const) {
      sqlTool(database, 'create-database');
      sqlTool(database, 'setup-schema', '-v', '0.0');
      sqlTool(database, 'update-schema', '-d', path.join(bins.schema, schema, 'versioned'));
    }

    const dynamicConfigFile = path.join(configDir, 'dynamicconfig.yaml');
    writeFileSync(dynamicConfigFile, dynamicConfig(options.dynamicConfig ?? {}));
    writeFileSync(
      path.join(configDir, 'temporal.yaml'),
      serverConfig(ports, dynamicConfigFile, options.numHistoryShards ?? 4),
    );
    await startServer();

    const conn = connection as unknown as Connection;
    await until('the default namespace', async () => {
      try {
        await conn.workflowService.registerNamespace({
          namespace: 'default',
          workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(24 * 3600) },
        });
      } catch (err) {
        if ((err as { code?: unknown }).code !== ALREADY_EXISTS) throw err;
      }
      await conn.workflowService.describeNamespace({ namespace: 'default' });
    });
    await until('the search attributes', () => registerSearchAttributes(conn, 'default'));
    await probe();
  } catch (err) {
    const tail = existsSync(serverLog) ? `\ntemporal-server log:\n${logTail(serverLog, 15)}` : '';
    await cleanUp();
    throw new Error(`${(err as Error).message}${tail}`, { cause: err });
  }

  return {
    address: `127.0.0.1:${ports.frontendGrpc}`,
    namespace: 'default',
    metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
    postgres: { host: '127.0.0.1', port: ports.postgres as number, user: DB_USER, password: DB_PASSWORD },
    serverPid: () => server?.pid ?? -1,
    serverLogTail: (lines = 40) => logTail(serverLog, lines),
    async restartServer({ whileDown } = {}) {
      await killServer();
      await whileDown?.();
      await startServer();
      await probe();
    },
    async stop() {
      const pids = [server?.pid, postmasterPid].filter((pid): pid is number => pid !== undefined);
      await cleanUp();
      // A daemon's exit (the postmaster's) can trail the command that stopped it by a moment.
      const deadline = Date.now() + 10_000;
      const leftOver = () => [
        ...pids.filter(isAlive).map(String),
        ...execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
          .split('\n')
          .filter((line) => line.includes(scratch)),
      ];
      while (leftOver().length > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const left = leftOver();
      if (left.length > 0) {
        throw new Error(`cluster: processes left after stop: ${left.join(', ')}`);
      }
    },
  };
}

/** The last lines of a log, each cut to 400 characters (the server's carry whole stack traces). */
function logTail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line))
      .join('\n');
  } catch {
    return '(no log)';
  }
}
