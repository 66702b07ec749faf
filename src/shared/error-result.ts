import { ToolCallError } from './errors.js';
import { type ToolResult, textResult } from './tool-types.js';

/**
 * The error result for the failures a tool expects (bad arguments, Temporal unreachable, a run
 * that ended without an outcome, an unknown or foreign task, a call the permission policy or the
 * background quota refused, a write to stdin that came to nothing: every `ToolCallError`); anything
 * else is a bug and surfaces.
 */
export function errorResult(err: unknown): ToolResult {
  if (err instanceof ToolCallError) return textResult(err.message, true);
  throw err;
}
