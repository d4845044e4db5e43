// Lengths as distributions: fixed, or a normal with mean and stdev clamped to
// [min, max] (vLLM's and GuideLLM's synthetic data options), drawn from a seeded
// generator so the same seed gives the same lengths. Plain module (k6 may bundle it).
import { inputError } from './input-error.ts';
import { normalSampler } from '../../lib/run/seeded-random.ts';

export interface LengthDistribution {
  mean: number;
  /** 0 = every draw is the mean. */
  stdev: number;
  min: number;
  max: number;
}

/** Fixed length n. */
export function fixed(n: number): LengthDistribution {
  return { mean: n, stdev: 0, min: n, max: n };
}

/** A distribution from its parts (min/max default to mean -/+ 4 stdev, at least 1); throws on an impossible one. */
export function lengthDistribution(source: string, parts: { mean: number; stdev?: number; min?: number; max?: number }): LengthDistribution {
  const { mean } = parts;
  const stdev = parts.stdev ?? 0;
  const min = parts.min ?? (stdev === 0 ? mean : Math.max(1, Math.floor(mean - 4 * stdev)));
  const max = parts.max ?? (stdev === 0 ? mean : Math.ceil(mean + 4 * stdev));
  const bad = (problem: string, fix: string) => inputError(source, 0, problem, fix);
  for (const [name, v] of [['mean', mean], ['stdev', stdev], ['min', min], ['max', max]] as const) {
    if (!Number.isFinite(v) || v < 0) throw bad(`${name} ${v} is negative or not a number`, 'give a length of 0 or more tokens');
  }
  if (mean < 1) throw bad(`mean ${mean} is below 1 token`, 'give a mean of at least 1');
  if (min > max) throw bad(`min ${min} is above max ${max}`, 'give a min at most the max');
  if (mean < min || mean > max) throw bad(`mean ${mean} lies outside [${min}, ${max}]`, 'give a mean between min and max');
  if (min < 1) throw bad(`min ${min} is below 1 token`, 'give a min of at least 1');
  return { mean, stdev, min: Math.round(min), max: Math.round(max) };
}

/**
 * The distribution of a length option given by its parts, each maybe unset: undefined
 * when none is given; stdev, min or max without the mean is an error whose fix is
 * `add ${giveMean}` (e.g. "--output-tokens <n>" or "OUTPUT_TOKENS=<n>").
 */
export function optionalLengthDistribution(source: string, parts: { mean?: number; stdev?: number; min?: number; max?: number }, giveMean: string): LengthDistribution | undefined {
  const { mean, stdev, min, max } = parts;
  if (mean === undefined) {
    if (stdev !== undefined || min !== undefined || max !== undefined) throw inputError(source, 0, 'stdev, min or max given without the mean', `add ${giveMean}`);
    return undefined;
  }
  return lengthDistribution(source, { mean, stdev, min, max });
}

/** Draws whole lengths: mean when stdev is 0, else a normal (Box-Muller) rounded and clamped to [min, max]. */
export function lengthSampler(d: LengthDistribution, random: () => number): () => number {
  if (d.stdev === 0) return () => Math.round(d.mean);
  const normal = normalSampler(random);
  return () => Math.min(d.max, Math.max(d.min, Math.round(d.mean + d.stdev * normal())));
}

/** "1024" or "1024 (stdev 128, 512..2048)" for plans and reports. */
export function describeDistribution(d: LengthDistribution): string {
  return d.stdev === 0 && d.min === d.max ? String(d.mean) : `mean ${d.mean}, stdev ${d.stdev}, ${d.min}..${d.max}`;
}
