/**
 * Takes key material out of this process's `/proc/<pid>/environ` and `/proc/<pid>/cmdline`, which
 * any process of the same user may read (a command, in a worker with no isolation).
 *
 * Deleting from `process.env` does not change those files: they show the strings the kernel laid
 * out at exec, and libc only drops its pointer to them. Node 20 has no `execve` to start again
 * without them, so the bytes are overwritten where they lie, through `/proc/self/mem` (a process
 * may write its own memory). A variable keeps its value for this process: it is set again first,
 * which copies it to the heap, where `process.env` (libc's `getenv`) then finds it. `process.argv`
 * is Node's own copy and keeps the flags as given.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { isWorkerCredential } from '../command-host/containment/command-env.js';

/** Flags whose value is a secret, as `--flag value` or `--flag=value`. */
const SECRET_FLAGS = ['--api-key'];

export interface HiddenKeyMaterial {
  /** The variables whose values were overwritten in `/proc/self/environ`. */
  variables: string[];
  /** How many flag values were overwritten in `/proc/self/cmdline`. */
  flagValues: number;
}

/**
 * Overwrites every key-material variable's value in `/proc/self/environ` and every secret flag's
 * value in `/proc/self/cmdline` with zero bytes. Where `/proc` is not Linux's (or not writable),
 * does nothing and says so by returning undefined.
 */
export function hideKeyMaterial(env: NodeJS.ProcessEnv = process.env): HiddenKeyMaterial | undefined {
  let layout: ReturnType<typeof memoryLayout>;
  try {
    layout = memoryLayout();
  } catch {
    return undefined;
  }
  let mem: number;
  try {
    mem = openSync('/proc/self/mem', 'r+');
  } catch {
    return undefined;
  }
  try {
    const variables: string[] = [];
    const environ = readRegion(mem, layout.envStart, layout.envEnd);
    forEachString(environ, (start, end) => {
      const entry = environ.toString('utf8', start, end);
      const name = entry.slice(0, entry.indexOf('='));
      if (!isWorkerCredential(name) || entry.length === name.length + 1) return;
      const value = env[name];
      // Set again (a heap copy) before the original bytes go, so this process still reads it.
      if (value !== undefined) env[name] = value;
      zero(
        mem,
        layout.envStart + start + Buffer.byteLength(name) + 1,
        end - start - Buffer.byteLength(name) - 1,
      );
      variables.push(name);
    });
    let flagValues = 0;
    const cmdline = readRegion(mem, layout.argStart, layout.argEnd);
    let secretNext = false;
    forEachString(cmdline, (start, end) => {
      const arg = cmdline.toString('utf8', start, end);
      if (secretNext) {
        zero(mem, layout.argStart + start, end - start);
        flagValues += 1;
        secretNext = false;
        return;
      }
      const flag = SECRET_FLAGS.find((name) => arg === name || arg.startsWith(`${name}=`));
      if (flag === undefined) return;
      if (arg === flag) secretNext = true;
      else {
        zero(mem, layout.argStart + start + flag.length + 1, end - start - flag.length - 1);
        flagValues += 1;
      }
    });
    return { variables, flagValues };
  } finally {
    closeSync(mem);
  }
}

/** Where the kernel laid out this process's arguments and environment (`/proc/self/stat` fields 48-51). */
function memoryLayout() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (in parentheses, which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => {
    const value = Number(fields[n - 3]);
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`no field ${n} in /proc/self/stat`);
    return value;
  };
  return { argStart: field(48), argEnd: field(49), envStart: field(50), envEnd: field(51) };
}

function readRegion(mem: number, start: number, end: number): Buffer {
  const bytes = Buffer.alloc(end - start);
  readSync(mem, bytes, 0, bytes.length, start);
  return bytes;
}

function zero(mem: number, at: number, length: number): void {
  if (length > 0) writeSync(mem, Buffer.alloc(length), 0, length, at);
}

/** Calls `each(start, end)` for every NUL-terminated string in `region`. */
function forEachString(region: Buffer, each: (start: number, end: number) => void): void {
  let start = 0;
  while (start < region.length) {
    let end = region.indexOf(0, start);
    if (end === -1) end = region.length;
    if (end > start) each(start, end);
    start = end + 1;
  }
}
