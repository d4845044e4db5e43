// Open-loop arrival schedules: when each request is due, independent of how fast the
// target answers (that independence is what keeps coordinated omission out of the
// figures). Constant = evenly spaced; Poisson = exponential gaps with the same mean,
// like independent users, from a seeded generator so a run can be repeated exactly.

import { seededRandom } from '../../lib/run/seeded-random.ts';

export type ArrivalKind = 'constant' | 'poisson';

/** Yields arrival offsets in ms from the start, for `ratePerS` until `durationMs`. */
export function* arrivals(kind: ArrivalKind, ratePerS: number, durationMs: number, seed = 1): Generator<number> {
  const meanGapMs = 1000 / ratePerS;
  const random = seededRandom(seed);
  let t = kind === 'constant' ? 0 : -Math.log(1 - random()) * meanGapMs;
  while (t < durationMs) {
    yield t;
    t += kind === 'constant' ? meanGapMs : -Math.log(1 - random()) * meanGapMs;
  }
}
