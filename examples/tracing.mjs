/**
 * Traces one `bash` call from the tool through its workflow to the command activity and back, and
 * prints the spans as a tree. Run it after `npm run build`: `node examples/tracing.mjs`.
 *
 * The tracing is the SDK's (`OpenTelemetryPlugin` from @temporalio/interceptors-opentelemetry, on
 * the client and the worker); durable-bash adds the tool call's own span (`durable-bash.bash`).
 * The dev server comes from durable-bash/testing, so it runs offline.
 */
import { trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { createBashTools } from 'durable-bash';
import { durableBashPlugin } from 'durable-bash/plugin';
import { createDevServerEnv } from 'durable-bash/testing';

Runtime.install({ logger: new DefaultLogger('ERROR') }); // The SDK's INFO lines are noise here.

const spans = new InMemorySpanExporter();
const spanProcessor = new SimpleSpanProcessor(spans);
const resource = new Resource({ 'service.name': 'durable-bash-example' });
const provider = new BasicTracerProvider({ resource });
provider.addSpanProcessor(spanProcessor);
// The global provider and a context manager: the tool's span is the active one while its call
// runs, so the SDK's client interceptor starts the workflow under it.
provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });

const env = await createDevServerEnv();
try {
  const otel = new OpenTelemetryPlugin({ resource, spanProcessor });
  // Commands run in the directory this runs from: declared a workdir root, as `dev` declares its own.
  const bash = durableBashPlugin({ taskQueue: 'traced', executor: { workdirRoots: [process.cwd()] } });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'traced',
    plugins: [bash, otel],
  });
  const client = new Client({ connection: env.connection, plugins: [bash, otel] });
  const [bashTool] = createBashTools({ client, taskQueue: 'traced' });
  const result = await worker.runUntil(
    bashTool.execute(
      { command: 'echo traced', description: 'Prints a word' },
      { signal: AbortSignal.timeout(30_000) },
    ),
  );
  console.log(`bash answered: ${JSON.stringify(result.content[0].text)}\n`);
} finally {
  await env.teardown();
}

// The spans as a tree, children under their parent, in start order.
const finished = spans.getFinishedSpans();
const byParent = new Map();
for (const span of finished) {
  const parent = span.parentSpanId ?? '';
  byParent.set(parent, [...(byParent.get(parent) ?? []), span]);
}
const ids = new Set(finished.map((span) => span.spanContext().spanId));
const print = (span, depth) => {
  console.log(`${'  '.repeat(depth)}${span.name}`);
  const children = byParent.get(span.spanContext().spanId) ?? [];
  children.sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  for (const child of children) print(child, depth + 1);
};
const roots = finished.filter((span) => !span.parentSpanId || !ids.has(span.parentSpanId));
const traces = new Set(finished.map((span) => span.spanContext().traceId));
console.log(`${finished.length} spans in ${traces.size} trace${traces.size === 1 ? '' : 's'}:`);
for (const root of roots) print(root, 1);
trace.disable();
