/**
 * An OpenTelemetry span around each tool call (`durable-bash.bash`, ...), the parent of what the
 * call does in Temporal when the client carries the SDK's tracing interceptors
 * (`@temporalio/interceptors-opentelemetry`): the workflow's start, its run, the command activity.
 * Through `@opentelemetry/api` alone, so it costs nothing until the process registers a tracer
 * provider (docs/OPERATIONS.md, tracing).
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { resultText, type Tool, type ToolResult } from '../shared/tool-types.js';

const tracer = trace.getTracer('durable-bash');

export function withToolSpan<T extends Tool>(tool: T): T {
  const execute = tool.execute.bind(tool);
  return {
    ...tool,
    execute: (args, exec) =>
      tracer.startActiveSpan(`durable-bash.${tool.name}`, async (span) => {
        try {
          const result = await execute(args, exec);
          // The call's outcome as the model sees it: an error answer is one line of text.
          if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: errorLine(result) });
          return result;
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
          throw err;
        } finally {
          span.end();
        }
      }),
  };
}

function errorLine(result: ToolResult): string {
  return resultText(result).split('\n', 1)[0] ?? '';
}
