/**
 * A scripted Anthropic Messages API on a loopback port, for a real `claude` pointed at it with
 * `ANTHROPIC_BASE_URL`: each conversation request gets the next scripted step as an SSE stream, and
 * every request is recorded. No model and no network.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A block of an answer the script gives: text, or a call of a tool with its input. */
export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown> };

/**
 * One answer of the model: its blocks, or a function of the request that gives them (it may wait,
 * and it may assert on the request, e.g. on the tool_result it carries). The answer stops with
 * `tool_use` when it holds a call, else with `end_turn`.
 */
export type ScriptedStep =
  | ScriptedBlock[]
  | ((request: MessagesRequest) => ScriptedBlock[] | Promise<ScriptedBlock[]>);

/** A content block of a message in a request, as the client sent it (only the fields read here typed). */
export interface ContentBlock {
  type: string;
  text?: string;
  /** A tool_result's content: a string or blocks. */
  content?: string | ContentBlock[];
  tool_use_id?: string;
  is_error?: boolean;
  [field: string]: unknown;
}

export interface Message {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

/** A tool as the request offers it to the model. */
export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  defer_loading?: boolean;
  [field: string]: unknown;
}

/** The body of a `POST /v1/messages`, parsed. */
export interface MessagesRequest {
  model: string;
  messages: Message[];
  system?: string | ContentBlock[];
  tools?: ToolDefinition[];
  stream?: boolean;
  [field: string]: unknown;
}

/** A request as it was recorded, in arrival order. */
export interface RecordedRequest {
  body: MessagesRequest;
  /** A side request (a title, a summary: no `tools`), answered without taking a step. */
  side: boolean;
}

/** The text a side request gets. */
export const SIDE_ANSWER_TEXT = 'Scripted side answer';

/** The text a conversation request gets when the script has no step left. */
export const NO_STEP_LEFT_TEXT = 'scripted-messages-api: no step left for this request';

/** The token count `POST /v1/messages/count_tokens` answers. */
export const COUNTED_INPUT_TOKENS = 100;

export interface ScriptedMessagesApi {
  /** The base URL, for `ANTHROPIC_BASE_URL`. */
  url: string;
  /** Every `POST /v1/messages` so far, side requests included, in arrival order. */
  requests: RecordedRequest[];
  /** The conversation requests so far (those that took a step or found none left). */
  conversationRequests(): MessagesRequest[];
  /** Every request to another path, as `METHOD path`. */
  otherPaths: string[];
  /** What each step that threw threw (its request got an API error), in order. */
  stepErrors: unknown[];
  /** Appends steps to the script. */
  push(...steps: ScriptedStep[]): void;
  /** How many steps are still unanswered. */
  stepsLeft(): number;
  /**
   * The first conversation request, recorded or still to come, whose last user message's text
   * contains `text` (or that `text` accepts); fails after `timeoutMs`.
   */
  waitForRequest(
    text: string | ((request: MessagesRequest) => boolean),
    timeoutMs?: number,
  ): Promise<MessagesRequest>;
  close(): Promise<void>;
}

/**
 * The text of a message's content: its text blocks, and the content of its tool results, one a
 * line.
 */
export function textOfContent(content: string | ContentBlock[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((block) => (block.type === 'tool_result' ? textOfContent(block.content) : (block.text ?? '')))
    .filter((text) => text !== '')
    .join('\n');
}

/** The last user message of a request. */
export function lastUserMessage(request: MessagesRequest): Message | undefined {
  return request.messages.findLast((message) => message.role === 'user');
}

/** The text of a request's last user message (tool results included). */
export const lastUserText = (request: MessagesRequest): string =>
  textOfContent(lastUserMessage(request)?.content);

/** The tool_result blocks of a request's last user message. */
export function toolResultsOf(request: MessagesRequest): ContentBlock[] {
  const content = lastUserMessage(request)?.content;
  return typeof content === 'string' || content === undefined
    ? []
    : content.filter((block) => block.type === 'tool_result');
}

/** Starts the API on 127.0.0.1 and a port the system picks, with `steps` as its first steps. */
export async function startScriptedMessagesApi(...steps: ScriptedStep[]): Promise<ScriptedMessagesApi> {
  const script = [...steps];
  const requests: RecordedRequest[] = [];
  const otherPaths: string[] = [];
  const stepErrors: unknown[] = [];
  const waiters: Array<{
    accepts: (request: MessagesRequest) => boolean;
    resolve: (r: MessagesRequest) => void;
  }> = [];

  const conversationRequests = () => requests.filter(({ side }) => !side).map(({ body }) => body);

  async function answerMessages(body: MessagesRequest, response: http.ServerResponse): Promise<void> {
    const side = body.tools === undefined || body.tools.length === 0;
    requests.push({ body, side });
    if (side) return sendMessage(response, body, [{ type: 'text', text: SIDE_ANSWER_TEXT }]);
    for (const waiter of waiters.filter(({ accepts }) => accepts(body))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(body);
    }
    const step = script.shift();
    if (step === undefined) return sendMessage(response, body, [{ type: 'text', text: NO_STEP_LEFT_TEXT }]);
    sendMessage(response, body, typeof step === 'function' ? await step(body) : step);
  }

  const server = http.createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      raw += chunk;
    });
    request.on('end', () => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method === 'POST' && path === '/v1/messages') {
        answerMessages(JSON.parse(raw) as MessagesRequest, response).catch((err: unknown) => {
          // A step that threw (a failed assertion): the client sees an API error, the test the throw.
          stepErrors.push(err);
          sendError(response, err);
        });
      } else if (request.method === 'POST' && path === '/v1/messages/count_tokens') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ input_tokens: COUNTED_INPUT_TOKENS }));
      } else {
        otherPaths.push(`${request.method} ${request.url}`);
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not scripted' } }),
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    conversationRequests,
    otherPaths,
    stepErrors,
    push: (...more) => {
      script.push(...more);
    },
    stepsLeft: () => script.length,
    waitForRequest(text, timeoutMs = 30_000) {
      const accepts =
        typeof text === 'string' ? (r: MessagesRequest) => lastUserText(r).includes(text) : text;
      const recorded = conversationRequests().find(accepts);
      if (recorded !== undefined) return Promise.resolve(recorded);
      return new Promise((resolve, reject) => {
        const waiter = { accepts, resolve };
        waiters.push(waiter);
        setTimeout(() => {
          if (!waiters.includes(waiter)) return;
          waiters.splice(waiters.indexOf(waiter), 1);
          const seen = conversationRequests().map(lastUserText);
          reject(
            new Error(
              `no request matched ${String(text)} in ${timeoutMs}ms; last user texts: ${JSON.stringify(seen)}`,
            ),
          );
        }, timeoutMs).unref();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  /** Sends `blocks` as the model's answer: an SSE stream when the request asked for one, else JSON. */
  function sendMessage(
    response: http.ServerResponse,
    request: MessagesRequest,
    blocks: ScriptedBlock[],
  ): void {
    // Ids unique across APIs: a resumed conversation that meets an id of its history again takes the
    // new call for a repeat and answers it `[Tool use interrupted]`.
    const id = `msg_scripted_${randomUUID()}`;
    const content = blocks.map((block) =>
      block.type === 'text'
        ? block
        : {
            type: 'tool_use' as const,
            id: `toolu_scripted_${randomUUID()}`,
            name: block.name,
            input: block.input,
          },
    );
    const stopReason = blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
    const usage = {
      input_tokens: 10,
      output_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      model: request.model,
      stop_sequence: null,
      usage,
    };
    if (request.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ...message, content, stop_reason: stopReason }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>) =>
      response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', { message: { ...message, content: [], stop_reason: null } });
    content.forEach((block, index) => {
      if (block.type === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else {
        event('content_block_start', { index, content_block: { ...block, input: {} } });
        event('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        });
      }
      event('content_block_stop', { index });
    });
    event('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 10 },
    });
    event('message_stop', {});
    response.end();
  }
}

/** Answers with an API error (HTTP 400, so the client does not retry) that names `err`. */
function sendError(response: http.ServerResponse, err: unknown): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(400, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message: `scripted step failed: ${err}` },
    }),
  );
}
