/** The chaos run's command line and its seeded randomness (a failing run replays with --seed). */

const USAGE = `usage: node test/chaos/run.mjs [--quick] [--seed N] [--keep]
  --quick   CI size: 20 background tasks, 2 rounds (a few minutes)
  --seed N  replay a run: every random choice of the harness comes from this seed
  --keep    keep the run's temp directory (db, logs, marker, notices) after the run`;

/** The sizes of a run. Full mode is the issue's: at least 50 tasks over several rounds. */
const MODES = {
  quick: { tasks: 20, rounds: 2, foregroundPerRound: 3, roundMs: 40_000 },
  full: { tasks: 60, rounds: 5, foregroundPerRound: 4, roundMs: 50_000 },
};

export function parseOptions(argv) {
  const options = { quick: false, seed: undefined, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--seed') {
      options.seed = Number(argv[++i]);
      if (!Number.isInteger(options.seed) || options.seed < 0) throw new Error(`--seed: ${USAGE}`);
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}\n${USAGE}`);
  }
  options.seed ??= Math.floor(Math.random() * 2 ** 31);
  return { ...options, ...(options.quick ? MODES.quick : MODES.full) };
}

/** A small seeded generator (mulberry32): the same seed gives the same choices. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [min, max]. */
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}
