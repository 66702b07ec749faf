/**
 * Issue 48, finding 5: `durable-bash mcp --http` answered an `initialize` with no credentials, so
 * any local process (or, bound to every address, anyone sending `Host: localhost`) acted as the
 * server's session; and it held any number of sessions for ever. Each case is the attack against
 * the built CLI's server, with a real dev server and command worker behind it.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MCP_TOKEN_ENV, MCP_TOKEN_FILE_NAME } from '../../src/cli/mcp-http-token.js';
import { DEFAULT_MCP_HTTP_SESSION_IDLE_MS } from '../../src/shared/limits.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { cli } from '../helpers/cli.js';
import {
  callTool,
  INITIALIZE_REQUEST,
  type McpHttpProcess,
  type RawAnswer,
  rawRequest,
  textOf,
  useMcpServers,
} from '../helpers/mcp-client.js';

const suite = useDevServerWithWorker();
let stateDir: string;

beforeEach(() => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-auth-'));
});

const mcp = useMcpServers(() => ({
  address: suite.env.address,
  taskQueue: suite.worker.taskQueue,
  stateDir,
}));

const session = () => `mcp-auth-${randomUUID()}`;

/** The protocol version a raw client names after its initialize. */
const PROTOCOL_HEADERS = { 'mcp-protocol-version': '2025-06-18' };

/** The answer's JSON-RPC error body, as the server writes every refusal. */
const refusal = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });

const MISSING_TOKEN = 'missing Authorization header: expected Bearer <token>';
const WRONG_TOKEN = 'invalid Authorization header: expected Bearer <token>, got a wrong token';
const OTHER_SCHEME = 'invalid Authorization header: expected Bearer <token>, got another scheme';

/** A raw `initialize` with `headers` (and the server's token, unless `headers` says otherwise). */
function initialize(server: Pick<McpHttpProcess, 'url' | 'token'>, headers: Record<string, string> = {}) {
  return rawRequest(server.url, {
    headers: { authorization: `Bearer ${server.token}`, ...headers },
    body: INITIALIZE_REQUEST,
  });
}

function sessionIdOf(answer: RawAnswer): string {
  const id = answer.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error(`no session id in ${answer.status} ${answer.body}`);
  return id;
}

/** The line every start ends with. */
const startLine = (id: string, url: string) =>
  `durable-bash: MCP server for session ${id} on ${url} (${suite.env.address}, ${suite.env.namespace ?? 'default'})\n`;

/** A token file of the test's own, mode 0600. */
function tokenFile(token: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-token-')), 'token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

/** This machine's own address on a network, not loopback: how another machine reaches it. */
function networkAddress(): string {
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
  if (address === undefined)
    throw new Error('this test needs an IPv4 address of this machine other than loopback');
  return address;
}

describe('durable-bash mcp --http lets in only the holders of its token', () => {
  it('answers a request without the token 401 with a Bearer challenge, and makes no session', async () => {
    const server = await mcp.startHttp(session(), ['--http-max-sessions', '1']);
    for (const method of ['POST', 'GET', 'DELETE']) {
      const answer = await rawRequest(server.url, {
        method,
        ...(method === 'POST' ? { body: INITIALIZE_REQUEST } : {}),
      });
      expect(answer.status, method).toBe(401);
      expect(answer.headers['www-authenticate'], method).toBe('Bearer realm="durable-bash"');
      expect(answer.headers['mcp-session-id'], method).toBeUndefined();
      expect(answer.body, method).toBe(refusal(-32000, MISSING_TOKEN));
    }
    // The server's one place was not taken by the refused initialize.
    const answer = await initialize(server);
    expect(answer.status).toBe(200);
    sessionIdOf(answer);
  });

  it('answers a wrong token or another scheme 401, and a tool call without the token runs nothing', async () => {
    const token = randomUUID();
    const server = await mcp.startHttp(session(), ['--http-token-file', tokenFile(token)]);
    const wrong = await initialize(server, { authorization: `Bearer ${token}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="durable-bash", error="invalid_token"');
    expect(wrong.body).toBe(refusal(-32000, WRONG_TOKEN));
    const basic = await initialize(server, {
      authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}`,
    });
    expect(basic.status).toBe(401);
    expect(basic.body).toBe(refusal(-32000, OTHER_SCHEME));

    // A session the client made is not a credential: its id without the token runs nothing.
    const client = await mcp.http(server);
    const marker = path.join(stateDir, 'ran');
    const call = await rawRequest(server.url, {
      headers: { ...PROTOCOL_HEADERS, 'mcp-session-id': client.transport.sessionId ?? '' },
      body: {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'bash', arguments: { command: `touch ${marker}`, description: 'Touch a file' } },
      },
    });
    expect(call.status).toBe(401);
    expect(call.body).toBe(refusal(-32000, MISSING_TOKEN));
    expect(
      textOf(await callTool(client.client, 'bash', { command: 'echo ok', description: 'Print ok' })),
    ).toBe('ok\n');
    expect(existsSync(marker)).toBe(false);
  });

  it(`takes the token from ${MCP_TOKEN_ENV}, and from --http-token-file before it`, async () => {
    const fromEnv = randomUUID();
    const byEnv = await mcp.startHttp(session(), [], { [MCP_TOKEN_ENV]: fromEnv });
    expect(byEnv.token).toBe(fromEnv);
    expect((await initialize(byEnv)).status).toBe(200);
    expect((await initialize(byEnv, { authorization: 'Bearer other' })).status).toBe(401);

    const fromFile = randomUUID();
    const byFile = await mcp.startHttp(session(), ['--http-token-file', tokenFile(fromFile)], {
      [MCP_TOKEN_ENV]: fromEnv,
    });
    expect((await initialize(byFile, { authorization: `Bearer ${fromFile}` })).status).toBe(200);
    expect((await initialize(byFile, { authorization: `Bearer ${fromEnv}` })).status).toBe(401);
    // Neither start made a token in the state dir.
    expect(existsSync(path.join(stateDir, MCP_TOKEN_FILE_NAME))).toBe(false);
  });

  it('makes a token at its first start (0600 in the state dir), prints it once with how to send it, and uses it again silently', async () => {
    const id = session();
    const file = path.join(stateDir, MCP_TOKEN_FILE_NAME);
    const first = await mcp.startHttp(id);
    const token = readFileSync(file, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.stderr()).toBe(
      `durable-bash: made a token for MCP over HTTP, kept in ${file} (mode 0600) for later starts\n` +
        `durable-bash: every client must send the header Authorization: Bearer ${token}\n` +
        startLine(id, first.url),
    );
    const client = await mcp.http(first);
    expect(
      textOf(await callTool(client.client, 'bash', { command: 'echo one', description: 'Print one' })),
    ).toBe('one\n');
    first.child.kill('SIGKILL');

    const second = await mcp.startHttp(id);
    expect(second.stderr()).toBe(startLine(id, second.url));
    expect(second.token).toBe(token);
    expect((await initialize(second)).status).toBe(200);
  });

  it('refuses a token that cannot travel in the header, or an empty one, in one line', async () => {
    const file = tokenFile('two words');
    expect(await cli(mcpArgs(['--http', '127.0.0.1:0', '--http-token-file', file]))).toEqual({
      code: 1,
      stdout: '',
      stderr: `durable-bash: invalid MCP token from --http-token-file ${file}: expected letters, digits and -._~+/ (then = padding), got another character at position 4\n`,
    });
    expect(await cli(mcpArgs(['--http', '127.0.0.1:0']), { [MCP_TOKEN_ENV]: '' })).toEqual({
      code: 1,
      stdout: '',
      stderr: `durable-bash: invalid MCP token from ${MCP_TOKEN_ENV}: expected letters, digits and -._~+/ (then = padding), got an empty one\n`,
    });
  });

  it('refuses a kept token file that other users may read, in one line', async () => {
    await mcp.startHttp(session());
    const file = path.join(stateDir, MCP_TOKEN_FILE_NAME);
    chmodSync(file, 0o644);
    const run = await cli(mcpArgs(['--http', '127.0.0.1:0']));
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `durable-bash: the MCP token file ${file} is open to other users (mode 0644): chmod 600 it, or remove it to make a new token\n`,
    });
  });
});

describe('durable-bash mcp --http-no-auth', () => {
  it('is refused on an address beyond loopback, in one line', async () => {
    const run = await cli(mcpArgs(['--http', '0.0.0.0:0', '--http-no-auth']));
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'durable-bash: --http-no-auth is only for a loopback address (127.0.0.1, [::1], localhost), got 0.0.0.0\n',
    });
  });

  it('is refused without --http, in one line', async () => {
    const run = await cli(mcpArgs(['--http-no-auth']));
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: 'durable-bash: --http-no-auth applies only with --http\n',
    });
  });

  it('on loopback says at start what it lets in, and asks no token', async () => {
    const id = session();
    const server = await mcp.startHttp(id, ['--http-no-auth']);
    expect(server.stderr()).toBe(
      `durable-bash: --http-no-auth: any process of any user on this machine can use this server as session ${id}: run commands, read its tasks, answer its approvals\n` +
        startLine(id, server.url),
    );
    expect((await rawRequest(server.url, { body: INITIALIZE_REQUEST })).status).toBe(200);
  });
});

describe('durable-bash mcp --http on every address', () => {
  it('says at start that it is plain HTTP, and a forged Host: localhost from the network gets 401, then 403 with the token', async () => {
    const id = session();
    const server = await mcp.startHttp(id, [
      '--http',
      '0.0.0.0:0',
      '--http-token-file',
      tokenFile(randomUUID()),
    ]);
    expect(server.stderr()).toBe(
      `durable-bash: warning: plain HTTP on ${server.url} reaches beyond this machine: the token and every call cross the network readable unless TLS is in front (a reverse proxy)\n` +
        startLine(id, server.url),
    );
    const port = new URL(server.url).port;
    const address = networkAddress();
    const overNetwork = { url: `http://${address}:${port}/mcp`, token: server.token };

    const forgedNoToken = await rawRequest(overNetwork.url, {
      headers: { host: 'localhost' },
      body: INITIALIZE_REQUEST,
    });
    expect(forgedNoToken.status).toBe(401);
    expect(forgedNoToken.body).toBe(refusal(-32000, MISSING_TOKEN));

    const forged = await initialize(overNetwork, { host: `localhost:${port}` });
    expect(forged.status).toBe(403);
    expect(forged.body).toBe(
      refusal(
        -32000,
        `invalid Host header: expected a name of this server on this connection (${address}), got localhost:${port}`,
      ),
    );
    expect((await initialize(overNetwork)).status).toBe(200);
    // A client on this machine still names it localhost.
    expect(
      (await initialize({ url: `http://127.0.0.1:${port}/mcp`, token: server.token }, { host: 'localhost' }))
        .status,
    ).toBe(200);
  });
});

describe('durable-bash mcp --http sessions', () => {
  it('holds at most --http-max-sessions; a new one past them gets 503 until one ends', async () => {
    const server = await mcp.startHttp(session(), ['--http-max-sessions', '2']);
    const first = sessionIdOf(await initialize(server));
    sessionIdOf(await initialize(server));
    const third = await initialize(server);
    expect(third.status).toBe(503);
    expect(third.headers['mcp-session-id']).toBeUndefined();
    expect(third.body).toBe(
      refusal(
        -32000,
        `too many MCP sessions: this server holds at most 2; one ends when its client ends it (DELETE) or after ${DEFAULT_MCP_HTTP_SESSION_IDLE_MS} ms with no request`,
      ),
    );
    const ended = await rawRequest(server.url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${server.token}`, 'mcp-session-id': first, ...PROTOCOL_HEADERS },
    });
    expect(ended.status).toBe(200);
    expect((await initialize(server)).status).toBe(200);
  });

  it('ends a session idle for --http-session-idle-ms: its id then gets 404, and its place is free', async () => {
    const server = await mcp.startHttp(session(), [
      '--http-max-sessions',
      '1',
      '--http-session-idle-ms',
      '500',
    ]);
    const id = sessionIdOf(await initialize(server));
    expect((await initialize(server)).status).toBe(503);
    // Polled with new sessions' initializes, which do not touch the idle one: its place frees once it ends.
    await expect.poll(async () => (await initialize(server)).status, { interval: 100 }).toBe(200);
    const ping = await rawRequest(server.url, {
      headers: { authorization: `Bearer ${server.token}`, 'mcp-session-id': id, ...PROTOCOL_HEADERS },
      body: { jsonrpc: '2.0', id: 2, method: 'ping' },
    });
    expect(ping.status).toBe(404);
    expect(ping.body).toBe(
      refusal(
        -32001,
        `unknown MCP session ${id}: it was ended, or expired after 500 ms with no request; initialize a new one`,
      ),
    );
  });

  it('keeps a session whose client listens on its event stream, however long it asks nothing', async () => {
    const server = await mcp.startHttp(session(), ['--http-session-idle-ms', '500']);
    const client = await mcp.http(server);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await client.client.listTools()).tools.map((tool) => tool.name)).toContain('bash');
  });
});

/** `durable-bash mcp` on the file's server and the test's state dir, with `extra`. */
function mcpArgs(extra: string[]): string[] {
  return [
    'mcp',
    '--address',
    suite.env.address,
    '--task-queue',
    suite.worker.taskQueue,
    '--session',
    session(),
    '--state-dir',
    stateDir,
    ...extra,
  ];
}
