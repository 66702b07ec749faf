#!/usr/bin/env node
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Command } from 'commander';
import { runDev } from './dev.js';
import { type ExecutorFlags, executorOptions, withExecutorOptions } from './executor-flags.js';
import { positiveInt, type ServerOptions, withServerOptions } from './options.js';
import { type RunFlags, runCommand } from './run-command.js';
import { runWorker } from './run-worker.js';

// The SDK's INFO lines (bundling, state changes) are noise on a terminal; warnings still show.
Runtime.install({ logger: new DefaultLogger((process.env.DURABLE_BASH_LOG_LEVEL as 'WARN') ?? 'WARN') });

const program = new Command('durable-bash')
  .description('bash tools for AI agents where every command run is a Temporal workflow')
  .showHelpAfterError();

withExecutorOptions(
  program
    .command('dev')
    .description('start a local Temporal dev server and a command worker (state kept across restarts)')
    .option('--port <n>', 'Temporal gRPC port', positiveInt, 7233)
    .option('--ui-port <n>', 'Temporal Web UI port', positiveInt, 8233)
    .option('--db <file>', 'database file for the dev server', '.durable-bash/temporal.db')
    .option('--task-queue <name>', 'task queue for commands', 'durable-bash'),
).action(async (flags: { port: number; uiPort: number; db: string; taskQueue: string } & ExecutorFlags) => {
  await runDev(
    { port: flags.port, uiPort: flags.uiPort, dbFile: flags.db, taskQueue: flags.taskQueue },
    executorOptions(flags),
  );
});

withExecutorOptions(
  withServerOptions(
    program.command('worker').description('run a command worker against an existing Temporal server'),
  ),
).action(async (flags: ServerOptions & ExecutorFlags) => {
  await runWorker(flags, executorOptions(flags), () =>
    process.stderr.write(
      `durable-bash: worker polling ${flags.taskQueue} on ${flags.address} (${flags.namespace})\n`,
    ),
  );
});

withServerOptions(
  program
    .command('run')
    .description('run one foreground command through the bash tool and print what the model would see')
    .option('--timeout-ms <ms>', 'timeout in milliseconds (the worker applies its cap)', positiveInt)
    .option('--workdir <dir>', 'working directory for the command')
    .argument('<command...>', 'the command, after --'),
).action(async (words: string[], flags: RunFlags) => {
  process.exitCode = await runCommand(words, flags);
});

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`durable-bash: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
