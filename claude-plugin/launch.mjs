#!/usr/bin/env node
/**
 * The plugin's MCP server: `durable-bash mcp` from the package this folder ships in, else from the
 * `durable-bash` on PATH (a marketplace install copies the folder alone into Claude Code's plugin
 * cache), with the plugin's options as its flags. It runs in this process: nothing stands between
 * claude and the server. Plain JavaScript, as Claude Code starts it with `node`. The options
 * `channel` (`--channel`), `bash_arguments` (`--bash-arguments`) and `mcp_flags` (a JSON array of
 * more flags) are how `durableBashOptions({ channels: true })` starts it for the Agent SDK.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The plugin's options (plugin.json `userConfig`), as flags; an empty one is left to the environment. */
const OPTION_FLAGS = [
  ['DURABLE_BASH_PLUGIN_ADDRESS', '--address'],
  ['DURABLE_BASH_PLUGIN_NAMESPACE', '--namespace'],
  ['DURABLE_BASH_PLUGIN_TASK_QUEUE', '--task-queue'],
];

const here = path.dirname(fileURLToPath(import.meta.url));
const packaged = path.join(here, '..', 'dist', 'cli', 'main.js');

/** The CLI's main.js: the enclosing package's, else the one `durable-bash` on PATH links to. */
function findCli() {
  if (readable(packaged)) return packaged;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const bin = path.join(dir, 'durable-bash');
    if (readable(bin)) return realpathSync(bin);
  }
  return undefined;
}

function readable(file) {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

const cli = findCli();
if (cli === undefined) {
  process.stderr.write(
    `durable-bash plugin: cannot find durable-bash: no ${packaged} (the package this plugin came in) and no durable-bash on PATH; install it (npm install -g durable-bash) or load the plugin from the installed package\n`,
  );
  process.exit(1);
}
/** An option's value; unset, empty, or left unsubstituted by Claude Code: undefined. */
function option(variable) {
  const value = process.env[variable];
  return value === undefined || value === '' || value.startsWith('${') ? undefined : value;
}

/** `mcp_flags`: a JSON array of strings, else one line saying so. */
function moreFlags() {
  const text = option('DURABLE_BASH_PLUGIN_MCP_FLAGS');
  if (text === undefined) return [];
  let flags;
  try {
    flags = JSON.parse(text);
  } catch {
    flags = undefined;
  }
  if (!Array.isArray(flags) || !flags.every((flag) => typeof flag === 'string')) {
    process.stderr.write(`durable-bash plugin: mcp_flags is not a JSON array of strings: ${text}\n`);
    process.exit(1);
  }
  return flags;
}

const flags = [
  ...OPTION_FLAGS.flatMap(([variable, flag]) => {
    const value = option(variable);
    return value === undefined ? [] : [flag, value];
  }),
  ...(option('DURABLE_BASH_PLUGIN_CHANNEL') === 'true' ? ['--channel'] : []),
  ...(option('DURABLE_BASH_PLUGIN_BASH_ARGUMENTS') === undefined
    ? []
    : ['--bash-arguments', option('DURABLE_BASH_PLUGIN_BASH_ARGUMENTS')]),
  ...moreFlags(),
];
process.argv = [process.execPath, cli, 'mcp', ...flags];
await import(pathToFileURL(cli).href);
