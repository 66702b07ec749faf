import { createBashInputTool } from '../tools/bash-input.js';
import type { ServerOptions } from './options.js';
import { printResult } from './print-result.js';
import { withTasks } from './with-client.js';

export interface InputFlags extends ServerOptions {
  owner: string;
  /** Close the task's stdin after the text. */
  close?: boolean;
  /** Commander's `--no-newline`: false to write the text without a newline after it. */
  newline: boolean;
}

/**
 * `durable-bash input <id> [text...]`: the `bash_input` tool, acting as the owner session. The
 * words are joined by spaces and end with a newline (a line, as a typed answer would), unless
 * `--no-newline`; `--close` alone only closes the stdin. Resolves to the exit code.
 */
export function runInput(taskId: string, words: string[], flags: InputFlags): Promise<number> {
  const text = words.length === 0 ? '' : `${words.join(' ')}${flags.newline ? '\n' : ''}`;
  return withTasks(flags, async (tasks) =>
    printResult(
      await createBashInputTool(tasks).execute(
        { task_id: taskId, text, ...(flags.close ? { close: true } : {}) },
        { agent: { sessionId: flags.owner } },
      ),
    ),
  );
}
