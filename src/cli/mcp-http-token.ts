/**
 * The token `durable-bash mcp --http` asks of every request: from `--http-token-file`, else
 * `DURABLE_BASH_MCP_TOKEN`, else the one kept in the state directory, made there (mode 0600) by the
 * first start that needed one. Only that start prints it.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { checkBearerToken } from '../mcp/http-auth.js';

/** The variable that holds the token when no `--http-token-file` is given. */
export const MCP_TOKEN_ENV = 'DURABLE_BASH_MCP_TOKEN';

/** The token file's name in the state directory. */
export const MCP_TOKEN_FILE_NAME = 'mcp-http-token';

/** 256 random bits: beyond guessing, however many requests are tried. */
const MCP_TOKEN_BYTES = 32;

export interface McpHttpToken {
  token: string;
  /** The file this start made to keep the token in; absent when it was given, or made before. */
  made?: string;
}

/** The token the flags, the environment or the state directory give, made and kept when none does. */
export function mcpHttpToken(
  flags: { httpTokenFile?: string; stateDir: string },
  env: NodeJS.ProcessEnv = process.env,
): McpHttpToken {
  if (flags.httpTokenFile !== undefined)
    return {
      token: tokenIn(readFileSync(flags.httpTokenFile, 'utf8'), `--http-token-file ${flags.httpTokenFile}`),
    };
  const fromEnv = env[MCP_TOKEN_ENV];
  if (fromEnv !== undefined) return { token: tokenIn(fromEnv, MCP_TOKEN_ENV) };
  return stateDirToken(path.join(flags.stateDir, MCP_TOKEN_FILE_NAME));
}

function stateDirToken(file: string): McpHttpToken {
  const kept = keptToken(file);
  return kept !== undefined ? { token: kept } : madeToken(file);
}

function tokenIn(text: string, source: string): string {
  const token = text.trim();
  checkBearerToken(token, source);
  return token;
}

/**
 * The token kept in `file`, or undefined when there is none. A file another user could read, or
 * that is not this user's, is refused: its token is no longer a secret of this user's.
 */
function keptToken(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stat.isFile()) throw new Error(`the MCP token file ${file} is not a regular file`);
    if (uid !== undefined && stat.uid !== uid)
      throw new Error(`the MCP token file ${file} belongs to uid ${stat.uid}, not to this user (uid ${uid})`);
    if ((stat.mode & 0o077) !== 0)
      throw new Error(
        `the MCP token file ${file} is open to other users (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}): chmod 600 it, or remove it to make a new token`,
      );
    return tokenIn(readFileSync(fd, 'utf8'), file);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes a token and keeps it in `file` (mode 0600). It is written whole under a name of this
 * process's, then linked into place, which fails if another start got there first: then that
 * start's token is the one, and both servers ask for it.
 */
function madeToken(file: string): McpHttpToken {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const token = randomBytes(MCP_TOKEN_BYTES).toString('base64url');
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, `${token}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return stateDirToken(file);
  } finally {
    unlinkSync(temporary);
  }
  return { token, made: file };
}
