// Everything one running reference server shares between requests: resolved
// options, keys, the brain, the rate limiter and the counters some defects and the
// latency knobs key on.
import type { DefectName } from './defects.ts';
import type { VariantName } from './variants.ts';
import type { ResolvedOptions } from './options.ts';
import type { KeyRing } from './keys.ts';
import type { Limiter } from './rate-limit.ts';
import type { EngineRuntime } from './engine-runtime.ts';

/** The reference's one brain (brains.ts resolves ids to it). */
export interface Brain {
  id: string;
  name: string;
}

export interface Counters {
  requests: number;
  inFlight: number;
  /** Authenticated chat requests (both routes); "every 5th" defects count these. */
  chatRequests: number;
  /** Non-stream completions written; flaky-cc-id alternates on it. */
  jsonCompletions: number;
  /** Streams started; latency.stallEvery counts these. */
  streams: number;
}

export interface ServerState {
  opts: ResolvedOptions;
  keys: KeyRing;
  brain: Brain;
  limiter: Limiter;
  counters: Counters;
  /** Aborts of the requests in flight: close() calls them all, so delays and hanging streams end at once. */
  live: Set<() => void>;
  shuttingDown: boolean;
  /** The rehearsal engine model, only when asked for (options.engine). */
  engine?: EngineRuntime;
  /** A run-time change of the engine in force (reference/engine-changes.ts): slots lowered to this many. */
  engineChange?: { slots?: number; slotsUntil?: number };
}

export function hasDefect(state: ServerState, name: DefectName): boolean {
  // Stryker disable next-line ConditionalExpression: [gate] hasDefect; killed: suite
  return state.opts.defect === name;
}

export function hasVariant(state: ServerState, name: VariantName): boolean {
  return state.opts.variants.has(name);
}
