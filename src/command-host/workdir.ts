/**
 * The workdir check before a command starts: a directory that is there, or the task's end in one
 * line that names the workdir and what is wrong with it.
 */
import fs from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { RunFailureType } from '../shared/task.js';

/** Ends the task (`workdirNotFound`, not retried) when a command cannot run in `workdir`. */
export async function assertWorkdir(workdir: string): Promise<void> {
  const problem = await workdirProblem(workdir);
  if (problem !== undefined) {
    throw ApplicationFailure.create({
      type: RunFailureType.workdirNotFound,
      message: problem,
      nonRetryable: true,
    });
  }
}

/** Why a command cannot run in `workdir`, in one line that names it; undefined when it can. */
async function workdirProblem(workdir: string): Promise<string | undefined> {
  const stat = await fs.stat(workdir).catch(() => undefined);
  if (stat?.isDirectory()) return undefined;
  if (stat !== undefined) return `workdir is not a directory: ${onePath(workdir)}`;
  const target = await fs.readlink(workdir).catch(() => undefined);
  if (target !== undefined)
    return `workdir is a dangling symbolic link: ${onePath(workdir)} -> ${onePath(target)}`;
  return `workdir does not exist or is not a directory: ${onePath(workdir)}`;
}

/** A path as it is, or JSON-quoted when it holds a line break or another control character. */
function onePath(file: string): string {
  return /[\p{Cc}\u2028\u2029]/u.test(file) ? JSON.stringify(file) : file;
}
