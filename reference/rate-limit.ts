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
  // Stryker disable next-line BooleanLiteral: [equiv] caller passes it
  constructor(private readonly neverRecover = false, private readonly account?: { limit: number; windowMs: number }) {}

  take(key: KeyRecord, now = Date.now()): RateDecision {
    const { limit, windowMs } = this.account ?? key.limit;
    // Stryker disable next-line StringLiteral: [unreached] limit-account-2s
    const name = this.account ? 'account' : key.name;
    let w = this.windows.get(name);
    // Stryker disable next-line EqualityOperator,ArithmeticOperator,ConditionalExpression: [no-throttle] LIM-1; killed: LIM-3
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(name, w);
    }
    const resetMs = Math.max(1, w.start + windowMs - now);
    const scope = this.account ? 'account' as const : 'key' as const;
    // Stryker disable next-line ConditionalExpression,BooleanLiteral: [gate] ratelimit-never-recovers LIM-3
    if (this.stuck.has(name)) return { allowed: false, limit, remaining: 0, resetMs, scope };
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: [no-throttle] LIM-1, limit
    if (w.count >= limit) {
      // Stryker disable next-line ConditionalExpression: [gate] neverRecover; killed: LIM-3
      if (this.neverRecover) this.stuck.add(name);
      // Stryker disable next-line BooleanLiteral: [no-throttle] LIM-1
      return { allowed: false, limit, remaining: 0, resetMs, scope };
    }
    // Stryker disable next-line UpdateOperator: [no-throttle] LIM-1
    w.count++;
    // Stryker disable next-line ArithmeticOperator: [retry-hint] LIM-2
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
    // Stryker disable next-line ConditionalExpression,EqualityOperator: [gate] limit-burst
    if (key.name === 'rateLimit') return this.fallback.take(key, now);
    const { capacity, refillPerSecond } = this.shape;
    const b = this.buckets.get(key.name) ?? { tokens: capacity, at: now };
    // Stryker disable next-line MethodExpression,ArithmeticOperator: [gate] limit-burst
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * refillPerSecond);
    b.at = now;
    this.buckets.set(key.name, b);
    // Stryker disable next-line MethodExpression,ArithmeticOperator: [gate] limit-burst
    const untilFull = () => Math.max(1, Math.ceil(((capacity - b.tokens) / refillPerSecond) * 1000));
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: [gate] limit-burst
    if (b.tokens < 1) {
      // Stryker disable next-line BooleanLiteral,MethodExpression,ArithmeticOperator: [gate] limit-burst
      return { allowed: false, limit: capacity, remaining: 0, resetMs: untilFull(), retryMs: Math.max(1, Math.ceil(((1 - b.tokens) / refillPerSecond) * 1000)), scope: 'key' };
    }
    // Stryker disable next-line AssignmentOperator: [gate] limit-burst
    b.tokens -= 1;
    // Stryker disable next-line BooleanLiteral: [gate] limit-burst
    return { allowed: true, limit: capacity, remaining: Math.floor(b.tokens), resetMs: untilFull(), scope: 'key' };
  }
}

/** The limiter a server's options ask for. */
export function createLimiter(shape: LimiterShape): Limiter {
  // Stryker disable next-line LogicalOperator,BooleanLiteral: [gate] ratelimit-never-recovers LIM-3
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
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: [gate] ratelimit-reset-only
  if (ms < 1000) return `${Math.round(ms)}ms`;
  // Stryker disable next-line ArithmeticOperator: [gate] ratelimit-reset-only
  const h = Math.floor(ms / 3_600_000);
  // Stryker disable next-line ArithmeticOperator: [gate] ratelimit-reset-only
  const m = Math.floor((ms % 3_600_000) / 60_000);
  // Stryker disable next-line ArithmeticOperator: [gate] ratelimit-reset-only
  const sec = Math.round(ms % 60_000) / 1000;
  // Stryker disable next-line StringLiteral,ConditionalExpression,LogicalOperator: [gate] ratelimit-reset-only
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${sec}s`;
}

export function rateLimitHeaders(d: RateDecision, style: HintStyle = 'all', now = Date.now()): Record<string, string> {
  const h: Record<string, string> = {};
  // Stryker disable next-line ConditionalExpression,BlockStatement: [retry-hint] LIM-2
  if (style === 'all' || style === 'unparseable' || style === 'reset-only') {
    h['x-ratelimit-limit-requests'] = String(d.limit);
    h['x-ratelimit-remaining-requests'] = String(d.remaining);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: [retry-hint] LIM-2
    h['x-ratelimit-reset-requests'] = style === 'reset-only' ? goDuration(d.resetMs) : `${d.resetMs}ms`;
  }
  // Stryker disable next-line BooleanLiteral,ConditionalExpression,BlockStatement: [retry-hint] LIM-2
  if (!d.allowed) {
    const wait = d.retryMs ?? d.resetMs;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression,ArithmeticOperator: [retry-hint] LIM-2
    if (style === 'all' || style === 'seconds-only') h['Retry-After'] = String(Math.max(1, Math.ceil(wait / 1000)));
    // Stryker disable next-line StringLiteral,ConditionalExpression: [retry-hint] LIM-2; killed: LIM-2
    if (style === 'unparseable') h['Retry-After'] = 'soon';
    // An HTTP-date has whole seconds: the next second boundary after the wait ends.
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral,ArithmeticOperator: [retry-hint] LIM-2
    if (style === 'http-date') h['Retry-After'] = new Date(Math.ceil((now + wait) / 1000) * 1000).toUTCString();
    // Stryker disable next-line ConditionalExpression,EqualityOperator: [retry-hint] LIM-2
    if (style === 'all' || style === 'unparseable' || style === 'ms-only') h['retry-after-ms'] = String(wait);
  }
  return h;
}
