// The public options of the reference server, their defaults, and the checks that
// turn a typo in a defect or variant name into an error listing the valid names.
import { DEFECTS, isDefectName, type DefectName } from './defects.ts';
import { VARIANTS, isVariantName, type VariantName } from './variants.ts';
import { resolveEngineModel, type EngineModelOptions } from './engine-model.ts';

export interface RateWindow { limit: number; windowMs: number }
export interface TokenBucket { capacity: number; refillPerSecond: number }

export interface LatencyOptions {
  /** Delay before the first SSE chunk. */
  ttftMs?: number;
  /** Delay between SSE chunks. */
  itlMs?: number;
  /** Every Nth stream stalls once, mid-stream, for stallMs. */
  stallEvery?: number;
  stallMs?: number;
  /** Delay before a non-stream chat reply. */
  jsonMs?: number;
}

export interface ReferenceOptions {
  port?: number;
  defect?: string;
  variants?: string[];
  /**
   * main: the main and limited keys' windows; rateLimit: the rate-limit key's; account:
   * one window every key draws on (instead of per key); bucket: main and limited keys
   * draw on a token bucket (bursts) instead of a window.
   */
  rateLimit?: { main?: RateWindow; rateLimit?: RateWindow; account?: RateWindow; bucket?: TokenBucket };
  overloadInFlight?: number;
  latency?: LatencyOptions;
  replyWords?: number;
  /**
   * The rehearsal engine model (reference/engine-model.ts, docs/REHEARSAL.md): given,
   * even as {}, replies are timed by a model of an inference server with a known
   * capacity instead of `latency`, and usage is counted in o200k_base tokens.
   */
  engine?: Partial<EngineModelOptions>;
  /** Called with every request as it arrives, before anything else (self-tests record what each traffic path sent). */
  onRequest?: (req: ReceivedRequest) => void;
}

export interface ReceivedRequest { method: string; url: string; headers: Record<string, string | string[] | undefined> }

export interface ResolvedOptions {
  port: number;
  defect: DefectName | undefined;
  variants: ReadonlySet<VariantName>;
  rateLimit: { main: RateWindow; rateLimit: RateWindow; account?: RateWindow; bucket?: TokenBucket };
  overloadInFlight: number;
  latency: Required<LatencyOptions>;
  replyWords: number;
  engine: EngineModelOptions | undefined;
}

export const DEFAULT_MAIN_LIMIT: RateWindow = { limit: 2000, windowMs: 1000 };
export const DEFAULT_RATE_LIMIT_KEY_LIMIT: RateWindow = { limit: 10, windowMs: 1000 };
export const TIGHT_MAIN_LIMIT: RateWindow = { limit: 25, windowMs: 1000 };
// Tight limits of the limit-* variants: a small fraction of the suite's own pace
// (about 450 requests in 20 s against the reference on a 2-core machine).
export const PER_KEY_2S_LIMIT: RateWindow = { limit: 12, windowMs: 2000 };
export const ACCOUNT_2S_LIMIT: RateWindow = { limit: 16, windowMs: 2000 };
export const ACCOUNT_5S_LIMIT: RateWindow = { limit: 30, windowMs: 5000 };
export const BURST_BUCKET: TokenBucket = { capacity: 12, refillPerSecond: 6 };
export const DEFAULT_OVERLOAD_IN_FLIGHT = 512;
export const DEFAULT_REPLY_WORDS = 12;
/** Replies long enough for EV-13 to judge their delivery (at least 32 content chunks). */
export const LONG_REPLY_WORDS = 48;
/** cancelled-stream-keeps-slot: an engine small enough for the SVC-10 probe's held streams to fill. */
// Stryker disable next-line all: [gate] cancelled-stream-keeps-slot SVC-10
const SMALL_ENGINE = { maxBatch: 8, keepsCancelled: true };

export function resolveOptions(opts: ReferenceOptions = {}): ResolvedOptions {
  let defect: DefectName | undefined;
  // Stryker disable all: [not-api] option checks
  if (opts.defect !== undefined && opts.defect !== '') {
    if (!isDefectName(opts.defect)) {
      throw new Error(`unknown reference defect "${opts.defect}"; valid names: ${Object.keys(DEFECTS).join(', ')}`);
    }
    defect = opts.defect;
  }
  const variants = new Set<VariantName>();
  for (const v of opts.variants ?? []) {
    if (!isVariantName(v)) {
      throw new Error(`unknown reference variant "${v}"; valid names: ${Object.keys(VARIANTS).join(', ')}`);
    }
    variants.add(v);
  }
  // Stryker restore all
  const port = opts.port ?? 0;
  // Stryker disable next-line all: [not-api] option checks
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`port must be an integer 0-65535 (got ${port})`);

  const main = opts.rateLimit?.main ?? (variants.has('tight-rate-limit') ? TIGHT_MAIN_LIMIT
    : variants.has('limit-per-key-2s') ? PER_KEY_2S_LIMIT : DEFAULT_MAIN_LIMIT);
  const rateLimit = opts.rateLimit?.rateLimit ?? DEFAULT_RATE_LIMIT_KEY_LIMIT;
  // Stryker disable next-line LogicalOperator: [gate] account/burst
  const account = opts.rateLimit?.account ?? (variants.has('limit-account-2s') ? ACCOUNT_2S_LIMIT
    : variants.has('limit-account-5s') ? ACCOUNT_5S_LIMIT : undefined);
  // Stryker disable next-line LogicalOperator: [gate] account/burst
  const bucket = opts.rateLimit?.bucket ?? (variants.has('limit-burst') ? BURST_BUCKET : undefined);
  // Stryker disable all: [not-api] option checks
  for (const [name, w] of [['main', main], ['rateLimit', rateLimit], ['account', account]] as const) {
    if (w && (!(w.limit >= 1) || !(w.windowMs >= 1))) throw new Error(`rateLimit.${name} needs limit >= 1 and windowMs >= 1`);
  }
  if (bucket && (!(bucket.capacity >= 1) || !(bucket.refillPerSecond > 0))) throw new Error('rateLimit.bucket needs capacity >= 1 and refillPerSecond > 0');
  // Stryker restore all

  // Variants supply latency defaults; explicit latency options win.
  const l = opts.latency ?? {};
  // The defects that need streams taking time give them their own pace.
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: [gate] stream-buffered-until-end, replies-swapped-after-cancel pace
  const defectItlMs = defect === 'stream-buffered-until-end' ? 30 : defect === 'replies-swapped-after-cancel' ? 20 : 0;
  const latency: Required<LatencyOptions> = {
    ttftMs: l.ttftMs ?? (variants.has('slow-stream') ? 400 : 0),
    itlMs: l.itlMs ?? (variants.has('slow-stream') ? 30 : defectItlMs),
    stallEvery: l.stallEvery ?? 0,
    stallMs: l.stallMs ?? 0,
    jsonMs: l.jsonMs ?? (variants.has('slow-json') ? 300 : 0),
  };

  // Stryker disable next-line all: [reply] length (stream-buffered-until-end, fast-writer)
  const longReplies = defect === 'stream-buffered-until-end' || variants.has('fast-writer');
  // Stryker disable next-line ConditionalExpression: [reply] length (stream-buffered-until-end, fast-writer)
  const replyWords = opts.replyWords ?? (longReplies ? LONG_REPLY_WORDS : DEFAULT_REPLY_WORDS);
  // Stryker disable next-line all: [not-api] option checks
  if (!Number.isInteger(replyWords) || replyWords < 1) throw new Error(`replyWords must be a positive integer (got ${replyWords})`);

  return {
    port,
    defect,
    variants,
    // Stryker disable next-line ObjectLiteral: [gate] account/burst
    rateLimit: { main, rateLimit, ...(account ? { account } : {}), ...(bucket ? { bucket } : {}) },
    overloadInFlight: opts.overloadInFlight ?? DEFAULT_OVERLOAD_IN_FLIGHT,
    latency,
    replyWords,
    // Stryker disable next-line all: [unreached]
    engine: opts.engine ? resolveEngineModel(opts.engine) : defect === 'cancelled-stream-keeps-slot' ? resolveEngineModel(SMALL_ENGINE) : undefined,
  };
}

/** REFERENCE_DEFECT=<name>, REFERENCE_VARIANTS=<a,b>: how the embedded default target is chosen. */
// Stryker disable all: [not-api] env
export function referenceOptionsFromEnv(env: NodeJS.ProcessEnv): ReferenceOptions {
  const out: ReferenceOptions = {};
  const defect = env.REFERENCE_DEFECT?.trim();
  if (defect) out.defect = defect;
  const variants = (env.REFERENCE_VARIANTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (variants.length) out.variants = variants;
  return out;
}
// Stryker restore all
