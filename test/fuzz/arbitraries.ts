/**
 * Hand-written fast-check arbitraries for hostile input (zod-fast-check does not support fast-check
 * 4), and the run counts every property in test/fuzz uses: `FUZZ_SCALE` multiplies them (the
 * `test:fuzz` script runs them 20 times longer), `FUZZ_SEED` replays a run.
 */
import { fc } from '@fast-check/vitest';

const scale = Number(process.env.FUZZ_SCALE ?? '1');
if (!Number.isFinite(scale) || scale <= 0)
  throw new Error(`FUZZ_SCALE must be a positive number, got ${scale}`);

/** Parameters for a property run `base` times by default (times FUZZ_SCALE). */
export function runs(base: number): { numRuns: number; seed?: number } {
  const seed = process.env.FUZZ_SEED;
  return { numRuns: Math.max(1, Math.round(base * scale)), ...(seed ? { seed: Number(seed) } : {}) };
}

/** Pieces that break quoting, encodings, paths and lines, or look like query text. */
const hostilePieces = [
  "'",
  '"',
  '\\',
  '%',
  '%20',
  '%25',
  '%u',
  '%uD800',
  '%27',
  "' OR BashTaskOwner != '",
  ' OR 1=1 --',
  '`',
  '$(',
  ';',
  ' ',
  '\t',
  '\n',
  '\r',
  '\0',
  '\u0085',
  '\u2028',
  '\u2029',
  '\uFEFF',
  '\u200B',
  '/',
  '..',
  '../',
  'bash-',
  'session:',
  '*',
  '?',
  'ü',
  '€',
  '😀',
  'a',
];

/** A lone UTF-16 surrogate: a JavaScript string no UTF-8 encoder can carry as is. */
export const loneSurrogate = fc
  .integer({ min: 0xd800, max: 0xdfff })
  .map((code) => String.fromCharCode(code));

/** Strings made to hurt: hostile pieces, lone surrogates, any code point, and plain text. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(...hostilePieces),
  fc
    .array(fc.oneof(fc.constantFrom(...hostilePieces), loneSurrogate, fc.string({ maxLength: 3 })), {
      maxLength: 8,
    })
    .map((parts) => parts.join('')),
);

/** A string around (and far over) one of the byte limits, so its checks meet every side of the edge. */
export function sizedString(limitBytes: number): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom(limitBytes - 1, limitBytes, limitBytes + 1, limitBytes * 3, 3 * 1024 * 1024),
      fc.constantFrom('x', 'é', '€', '😀', ' '),
    )
    .map(([bytes, char]) => {
      const size = Buffer.byteLength(char);
      return char.repeat(Math.floor(bytes / size)) + 'x'.repeat(bytes % size);
    });
}

/** JSON-ish values: what a model's tool call could carry (and a few it could not). */
export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.anything({ withNullPrototype: true, withBigInt: false, maxDepth: 2 }),
  fc.constantFrom(undefined, null, Number.NaN, Number.POSITIVE_INFINITY, -0, [], {}),
);

/** A value for one field of a tool call: usually a hostile string, sometimes anything at all. */
export const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: jsonish },
  { weight: 1, arbitrary: fc.double() },
);
