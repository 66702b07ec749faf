#!/usr/bin/env node
/**
 * The plugin's MCP server: `durable-bash mcp` from the package this folder ships in, else from the
 * `durable-bash` on PATH (a marketplace install copies the folder alone into Claude Code's plugin
 * cache), with the plugin's options as its flags. It runs in this process: nothing stands between
 * claude and the server. Plain JavaScript, as Claude Code starts it with `node`.
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
const flags = OPTION_FLAGS.flatMap(([variable, flag]) => {
  const value = process.env[variable];
  // Unset, or an option Claude Code left unsubstituted.
  return value === undefined || value === '' || value.startsWith('${') ? [] : [flag, value];
});
process.argv = [process.execPath, cli, 'mcp', ...flags];
await import(pathToFileURL(cli).href);
