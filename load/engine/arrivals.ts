// Open-loop arrival schedules: when each request is due, independent of how fast the
// target answers (that independence is what keeps coordinated omission out of the
// figures). Constant = evenly spaced; Poisson = exponential gaps with the same mean,
// like independent users; gamma = gaps with the same mean and a burstiness factor
// (vLLM's --burstiness: shape k, 1 = Poisson, below 1 burstier, above 1 more even);
// trace = the offsets of a trace file. Seeded, so a run can be repeated exactly.
// Plain module (no Node APIs).
import { normalSampler, seededRandom } from '../../lib/run/seeded-random.ts';

export type ArrivalKind = 'constant' | 'poisson' | 'poisson-count' | 'gamma' | 'trace';

export interface ArrivalOptions {
  /** gamma: shape factor (1 = Poisson). */
  burstiness?: number;
  /** trace: offsets in ms from the start, not decreasing. */
  offsetsMs?: readonly number[];
  /** trace: the offsets made as they are due (the phases of a rehearsal), instead of a list. */
  schedule?: () => Iterable<number>;
}

/** Yields arrival offsets in ms from the start, for `ratePerS` until `durationMs`. */
export function* arrivals(kind: ArrivalKind, ratePerS: number, durationMs: number, seed = 1, opts: ArrivalOptions = {}): Generator<number> {
  if (kind === 'trace') {
    for (const t of opts.schedule?.() ?? opts.offsetsMs ?? []) {
      if (t >= durationMs) return;
      yield t;
    }
    return;
  }
  if (kind === 'poisson-count') {
    yield* poissonCount(ratePerS, durationMs, seed);
    return;
  }
  const meanGapMs = 1000 / ratePerS;
  const random = seededRandom(seed);
  const gap = kind === 'constant' ? () => meanGapMs
    : kind === 'gamma' ? gammaSampler(opts.burstiness ?? 1, meanGapMs / (opts.burstiness ?? 1), random)
    : () => -Math.log(1 - random()) * meanGapMs;
  let t = kind === 'constant' ? 0 : gap();
  while (t < durationMs) {
    yield t;
    t += gap();
  }
}

/**
 * Exactly round(rate x duration) arrivals, each placed uniformly at random in the window:
 * a Poisson process conditioned on its count. Gaps stay random (users do not queue up
 * evenly), but the step sends the rate it names, so a short sweep step is not judged on
 * a draw of 4 or 49 requests when 29 were meant.
 */
export function* poissonCount(ratePerS: number, durationMs: number, seed = 1): Generator<number> {
  const n = Math.max(1, Math.round((ratePerS * durationMs) / 1000));
  const random = seededRandom(seed);
  const at = Array.from({ length: n }, () => random() * durationMs).sort((a, b) => a - b);
  yield* at;
}

/** Gamma(shape, scale) draws: Marsaglia and Tsang (2000), with the shape < 1 boost (x * U^(1/shape)). */
export function gammaSampler(shape: number, scale: number, random: () => number): () => number {
  const boost = shape < 1;
  const k = boost ? shape + 1 : shape;
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  const normal = normalSampler(random);

  return () => {
    let x: number;
    for (;;) {
      const z = normal();
      const v0 = 1 + c * z;
      if (v0 <= 0) continue;
      const v = v0 * v0 * v0;
      const u = 1 - random();
      if (Math.log(u) < 0.5 * z * z + d - d * v + d * Math.log(v)) {
        x = d * v;
        break;
      }
    }
    if (boost) x *= Math.pow(1 - random(), 1 / shape);
    return x * scale;
  };
}
