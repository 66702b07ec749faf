/** How long a piece of a test took, in wall-clock time. */

/** Runs `work`; resolves with its value and the milliseconds it took. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const began = performance.now();
  const value = await work();
  return { value, ms: performance.now() - began };
}
