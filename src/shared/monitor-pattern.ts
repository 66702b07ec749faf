/**
 * A monitor's pattern (`notify_on`), compiled by RE2's linear-time engine (re2js, a pure
 * JavaScript port of RE2): no pattern can make a line cost more than time linear in its length
 * (which MONITOR_LINE_SCAN_BYTES bounds), so a bad pattern cannot stall a host that scans many
 * tasks' output. RE2's syntax is JavaScript's without backreferences and lookaround; `(?i)` makes a
 * pattern ignore case. The tools check a pattern with this, the host compiles it with this.
 */
import { RE2JS } from 're2js';
import { MAX_MONITOR_PATTERN_CHARS } from './limits.js';

/** A compiled monitor pattern: whether a line matches. */
export type LineMatcher = (line: string) => boolean;

/** Why `pattern` cannot be a monitor's, in the words a tool's error gives; undefined when it can. */
export function monitorPatternProblem(pattern: string): string | undefined {
  try {
    compileMonitorPattern(pattern);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Compiles `pattern`, or throws why it cannot (`monitorPatternProblem`'s words). */
export function compileMonitorPattern(pattern: string): LineMatcher {
  const chars = Array.from(pattern).length;
  if (chars === 0) throw new Error('expected a pattern, got an empty string');
  if (chars > MAX_MONITOR_PATTERN_CHARS)
    throw new Error(`the pattern has ${chars} characters, over the ${MAX_MONITOR_PATTERN_CHARS} allowed`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`not a pattern RE2 accepts (${reason})`);
  }
  return (line) => compiled.matcher(line).find();
}
