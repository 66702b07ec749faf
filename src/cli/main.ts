#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { DEFAULT_UI_ORIGINS } from '../codec/codec-server.js';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import { hideKeyMaterial } from '../worker/hide-key-material.js';
import type { ApprovalsFlags, DecideFlags } from './approvals.js';
import {
  CODEC_SERVER_TOKEN_ENV,
  type CodecFlags,
  type CodecServerFlags,
  codecDataConverter,
  codecKeyFileOption,
  withCodecOption,
} from './codec-options.js';
import { credentialFiles } from './credential-files.js';
import { type DeploymentFlags, deploymentOf } from './deployment-flags.js';
import { type ExecutorFlags, executorOptions, withExecutorOptions } from './executor-flags.js';
import type { InputFlags } from './input.js';
import type { KillFlags } from './kill.js';
import type { LogsFlags } from './logs.js';
import { type McpFlags, withMcpOptions } from './mcp-options.js';
import { type MetricsFlags, withMetricsOption } from './metrics-option.js';
import type { MonitorFlags } from './monitor.js';
import {
  collectRepeated,
  connectionTarget,
  portNumber,
  positiveInt,
  type ServerOptions,
  withOwnerOption,
  withServerOptions,
} from './options.js';
import type { PsFlags } from './ps.js';
import type { RemindFlags } from './remind.js';
import type { RunFlags } from './run.js';
import { runWorker } from './run-worker.js';

// Each command other than `worker` loads its own modules when it runs (`await import`): a worker
// process then holds none of the MCP server, the dev server's provisioning or the client commands
// (5 MB less heap for it, measured).

// Before anything else: no key material in this process's /proc/<pid>/environ or cmdline.
hideKeyMaterial();

/** The worker's own key files among the paths its commands may not read. */
function hidingCredentials(options: ExecutorOptions, files: string[]): ExecutorOptions {
  return files.length === 0
    ? options
    : { ...options, sandboxHidden: [...(options.sandboxHidden ?? []), ...files] };
}

/** The package's own version (dist/cli/main.js and src/cli/main.ts are both two levels below it). */
const { version = 'unknown' } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as {
  version?: string;
};

const program = new Command('durable-bash')
  .description('bash tools for AI agents where every command run is a Temporal workflow')
  .version(version, '-V, --version', 'print the version')
  .showHelpAfterError()
  // A command's flags follow its name and are its own: `approvals show --address A` gives the
  // address to `show`, not to `approvals`, which takes the same flags.
  .enablePositionalOptions();

withMetricsOption(
  withCodecOption(
    withExecutorOptions(
      program
        .command('dev')
        .description('start a local Temporal dev server and a command worker (state kept across restarts)')
        .option('--port <n>', 'Temporal gRPC port (0 picks free gRPC and UI ports)', portNumber, 7233)
        .option('--ui-port <n>', 'Temporal Web UI port (0 picks a free one) (default: 8233)', portNumber)
        .option('--db <file>', 'database file for the dev server', '.durable-bash/temporal.db')
        .option('--task-queue <name>', 'task queue for commands', 'durable-bash'),
    ),
  ),
).action(
  async (
    flags: { port: number; uiPort?: number; db: string; taskQueue: string } & ExecutorFlags &
      CodecFlags &
      MetricsFlags,
  ) => {
    const { runDev, devExecutorOptions } = await import('./dev.js');
    await runDev(
      {
        port: flags.port,
        uiPort: flags.uiPort,
        dbFile: flags.db,
        taskQueue: flags.taskQueue,
        metrics: flags.metricsPort,
      },
      devExecutorOptions(hidingCredentials(executorOptions(flags), credentialFiles(flags)), flags.db),
      codecDataConverter(flags),
    );
  },
);

withMetricsOption(
  withCodecOption(
    withExecutorOptions(
      withServerOptions(
        program
          .command('worker')
          .description('run a command worker against an existing Temporal server')
          .option(
            '--deployment-name <name>',
            'with --build-id: run as this Worker Deployment version (Worker Versioning; env DURABLE_BASH_DEPLOYMENT_NAME)',
          )
          .option(
            '--build-id <id>',
            "with --deployment-name: this version's build id (env DURABLE_BASH_BUILD_ID)",
          ),
      ),
    ),
  ),
).action(async (flags: ServerOptions & ExecutorFlags & CodecFlags & MetricsFlags & DeploymentFlags) => {
  const deployment = deploymentOf(flags);
  await runWorker(
    {
      ...connectionTarget(flags),
      taskQueue: flags.taskQueue,
      metrics: flags.metricsPort,
      ...(deployment ? { deployment } : {}),
    },
    hidingCredentials(executorOptions(flags), credentialFiles(flags)),
    (config) =>
      process.stderr.write(
        `durable-bash: worker polling ${flags.taskQueue} on ${config.address} (${config.namespace})\n`,
      ),
    codecDataConverter(flags),
  );
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('run')
        .description('run one command through the bash tool and print what the model would see')
        .option('--timeout-ms <ms>', 'timeout in milliseconds (the worker applies its cap)', positiveInt)
        .option('--workdir <dir>', 'working directory for the command')
        .option('--background', 'start it as a background task and print its id')
        .option(
          '--keep-stdin-open',
          "with --background: keep the command's stdin open for `durable-bash input`",
        )
        .option(
          '--on-host-loss <lost|restart>',
          'with --background: if its host is lost for good, end it lost (the default) or restart it on another host',
        )
        .option('--tty', 'run it on a terminal (120x40 unless --cols and --rows): print its screen')
        .option('--cols <n>', "with --tty: the terminal's width", positiveInt)
        .option('--rows <n>', "with --tty: the terminal's height", positiveInt)
        .option(
          '--max-output-tokens <n>',
          'print at most this many tokens (4 bytes a token): the head and tail, the middle cut (max_output_tokens)',
          positiveInt,
        )
        .argument('<command...>', 'the command, after --'),
    ),
    'the session the command runs as, in the foreground as in the background',
  ),
).action(async (words: string[], flags: RunFlags) => {
  const { runCommand } = await import('./run.js');
  process.exitCode = await runCommand(words, flags);
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('ps')
        .description("list a session's tasks (background and foreground): running first, then by end time")
        .option('--all', "list every session's tasks")
        .option('--query', "print the visibility query instead, to filter the Web UI's workflow list by it"),
    ),
    'the session whose tasks to list',
  ),
).action(async (flags: PsFlags) => {
  const { runPs } = await import('./ps.js');
  await runPs(flags);
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('logs')
        .description(
          "print a task's output (what the server still holds); never moves bash_output's read position",
        )
        .option('-f, --follow', 'keep printing new output until the task ends')
        .option(
          '--raw',
          "a terminal task's bytes as its program wrote them (the default shows its screen, unless following)",
        )
        .argument('<task-id>', 'the task, as run --background or ps printed it'),
    ),
    'the session the task belongs to',
  ),
).action(async (taskId: string, flags: LogsFlags) => {
  const { runLogs } = await import('./logs.js');
  process.exitCode = await runLogs(taskId, flags);
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('kill')
        .description("kill a background task's whole process group")
        .argument('<task-id>', 'the task, as run --background or ps printed it'),
    ),
    'the session the task belongs to',
  ),
).action(async (taskId: string, flags: KillFlags) => {
  const { runKill } = await import('./kill.js');
  process.exitCode = await runKill(taskId, flags);
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('input')
        .description('write a line to the stdin of a task started with --keep-stdin-open')
        .option('--close', "close the task's stdin after the text (alone: only close it)")
        .option('--no-newline', 'write the text without a newline after it')
        .argument('<task-id>', 'the task, as run --background printed it')
        .argument('[text...]', 'the text, after --; the words are joined by spaces'),
    ),
    'the session the task belongs to',
  ),
).action(async (taskId: string, words: string[], flags: InputFlags) => {
  const { runInput } = await import('./input.js');
  process.exitCode = await runInput(taskId, words, flags);
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('remind')
        .description(
          "set a reminder of a session (bash_remind): after --after-ms, its agent host gets the notice 'reminder: <note>'",
        )
        .option('--after-ms <ms>', 'when it fires, in milliseconds from now', positiveInt)
        .option('--agent-task-queue <queue>', "the agent host's queue its notice goes to")
        .option(
          '--task <task-id>',
          'fire sooner once this task has ended (repeatable: once all have)',
          collectRepeated,
        )
        .option('--cancel <reminder-id>', 'cancel this pending reminder instead')
        .argument('[note...]', 'the note, after --; the words are joined by spaces'),
    ),
    'the session the reminder belongs to',
  ),
).action(async (words: string[], flags: RemindFlags) => {
  const { runRemind } = await import('./remind.js');
  process.exitCode = await runRemind(words, flags);
});

withCodecOption(
  withOwnerOption(
    withServerOptions(
      program
        .command('monitor')
        .description(
          'set the monitor of a running background task (bash_monitor): each line matching <pattern> comes to its session as a notice',
        )
        .option('--agent-task-queue <queue>', "the agent host's queue its notices go to")
        .option('--clear', "clear the task's monitor instead")
        .argument('<task-id>', 'the background task')
        .argument('[pattern]', 'a regular expression (RE2 syntax)'),
    ),
    'the session the task belongs to',
  ),
).action(async (taskId: string, pattern: string | undefined, flags: MonitorFlags) => {
  const { runMonitor } = await import('./monitor.js');
  process.exitCode = await runMonitor(taskId, pattern, flags);
});

const approvalsCommand = withCodecOption(
  withServerOptions(
    program
      .command('approvals')
      .description(
        "list the approval requests waiting for a decision (a policy's ask), the oldest first, each command whole",
      )
      .option('--owner <session-id>', "only this session's requests")
      .enablePositionalOptions(),
  ),
).action(async (flags: ApprovalsFlags) => {
  const { runApprovals } = await import('./approvals.js');
  process.exitCode = await runApprovals(flags);
});

withCodecOption(
  withServerOptions(
    approvalsCommand
      .command('show')
      .description(
        'print one request as it would run: command, workdir, session, reason, age, how it runs, where it stands',
      )
      .argument('<approval-id>', 'the request, as durable-bash approvals lists it'),
  ),
).action(async (approvalId: string, flags: ServerOptions & CodecFlags) => {
  const { runShow } = await import('./approvals.js');
  process.exitCode = await runShow(approvalId, flags);
});

for (const [name, approved] of [
  ['approve', true],
  ['deny', false],
] as const) {
  withCodecOption(
    withServerOptions(
      program
        .command(name)
        .description(
          approved
            ? 'approve a waiting request: its command starts (a foreground call still waiting runs it; else it runs in the background)'
            : 'deny a waiting request: its command does not run, and its session is told why',
        )
        .option('--by <who>', 'who decides, as the request records it (default: <user>@<host>)')
        .option('--reason <text>', approved ? 'why' : 'why, shown to the model')
        .argument('<approval-id>', 'the request, as durable-bash approvals lists it'),
    ),
  ).action(async (approvalId: string, flags: DecideFlags) => {
    const { runDecide } = await import('./approvals.js');
    process.exitCode = await runDecide(approvalId, approved, flags);
  });
}

withMetricsOption(
  withCodecOption(
    withMcpOptions(
      withServerOptions(
        program
          .command('mcp')
          .description('serve the bash tools to MCP clients (stdio, or --http) as one agent session'),
      ),
    ),
  ),
).action(async (flags: McpFlags) => {
  const { runMcp } = await import('./mcp.js');
  await runMcp(flags);
});

program
  .command('codec-server')
  .description('serve the encryption codec to the Temporal Web UI and CLI (decoded payloads for operators)')
  .option('--host <host>', 'address to listen on (loopback by default)', '127.0.0.1')
  .option('--port <n>', 'port to listen on (0 picks a free one)', portNumber, 8888)
  .option('--ui-origin <origin...>', 'Web UI origins allowed to call it (CORS)', [...DEFAULT_UI_ORIGINS])
  .option('--token-file <file>', `file holding the bearer token (or set ${CODEC_SERVER_TOKEN_ENV})`)
  .addOption(codecKeyFileOption())
  .action(async (flags: CodecServerFlags) => {
    const { runCodecServer } = await import('./serve-codec.js');
    await runCodecServer(flags);
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`durable-bash: ${err instanceof Error ? err.message : String(err)}\n`);
  // At once: a refused connection's SDK timers would hold the process until their deadline.
  process.exit(1);
});
