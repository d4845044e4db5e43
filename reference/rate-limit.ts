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
  constructor(private readonly neverRecover = false, private readonly account?: { limit: number; windowMs: number }) {}

  take(key: KeyRecord, now = Date.now()): RateDecision {
    const { limit, windowMs } = this.account ?? key.limit;
    const name = this.account ? 'account' : key.name;
    let w = this.windows.get(name);
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(name, w);
    }
    const resetMs = Math.max(1, w.start + windowMs - now);
    const scope = this.account ? 'account' as const : 'key' as const;
    if (this.stuck.has(name)) return { allowed: false, limit, remaining: 0, resetMs, scope };
    if (w.count >= limit) {
      if (this.neverRecover) this.stuck.add(name);
      return { allowed: false, limit, remaining: 0, resetMs, scope };
    }
    w.count++;
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
    if (key.name === 'rateLimit') return this.fallback.take(key, now);
    const { capacity, refillPerSecond } = this.shape;
    const b = this.buckets.get(key.name) ?? { tokens: capacity, at: now };
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * refillPerSecond);
    b.at = now;
    this.buckets.set(key.name, b);
    const untilFull = () => Math.max(1, Math.ceil(((capacity - b.tokens) / refillPerSecond) * 1000));
    if (b.tokens < 1) {
      return { allowed: false, limit: capacity, remaining: 0, resetMs: untilFull(), retryMs: Math.max(1, Math.ceil(((1 - b.tokens) / refillPerSecond) * 1000)), scope: 'key' };
    }
    b.tokens -= 1;
    return { allowed: true, limit: capacity, remaining: Math.floor(b.tokens), resetMs: untilFull(), scope: 'key' };
  }
}

/** The limiter a server's options ask for. */
export function createLimiter(shape: LimiterShape): Limiter {
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
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const sec = Math.round(ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${sec}s`;
}

export function rateLimitHeaders(d: RateDecision, style: HintStyle = 'all', now = Date.now()): Record<string, string> {
  const h: Record<string, string> = {};
  if (style === 'all' || style === 'unparseable' || style === 'reset-only') {
    h['x-ratelimit-limit-requests'] = String(d.limit);
    h['x-ratelimit-remaining-requests'] = String(d.remaining);
    h['x-ratelimit-reset-requests'] = style === 'reset-only' ? goDuration(d.resetMs) : `${d.resetMs}ms`;
  }
  if (!d.allowed) {
    const wait = d.retryMs ?? d.resetMs;
    if (style === 'all' || style === 'seconds-only') h['Retry-After'] = String(Math.max(1, Math.ceil(wait / 1000)));
    if (style === 'unparseable') h['Retry-After'] = 'soon';
    // An HTTP-date has whole seconds: the next second boundary after the wait ends.
    if (style === 'http-date') h['Retry-After'] = new Date(Math.ceil((now + wait) / 1000) * 1000).toUTCString();
    if (style === 'all' || style === 'unparseable' || style === 'ms-only') h['retry-after-ms'] = String(wait);
  }
  return h;
}
