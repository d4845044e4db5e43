// Fixed-window request limits per key, and the headers that advertise them
// (OpenAI's x-ratelimit-* plus Retry-After / retry-after-ms on a 429).
import type { KeyRecord, KeyName } from './keys.ts';
import type { RequestContext } from './context.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the current window ends. */
  resetMs: number;
}

export class FixedWindowLimiter {
  private readonly windows = new Map<KeyName, { start: number; count: number }>();
  private readonly stuck = new Set<KeyName>();

  /** @param neverRecover ratelimit-never-recovers: a key throttled once stays throttled. */
  constructor(private readonly neverRecover = false) {}

  take(key: KeyRecord, now = Date.now()): RateDecision {
    const { limit, windowMs } = key.limit;
    let w = this.windows.get(key.name);
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key.name, w);
    }
    const resetMs = Math.max(1, w.start + windowMs - now);
    if (this.stuck.has(key.name)) return { allowed: false, limit, remaining: 0, resetMs };
    if (w.count >= limit) {
      if (this.neverRecover) this.stuck.add(key.name);
      return { allowed: false, limit, remaining: 0, resetMs };
    }
    w.count++;
    return { allowed: true, limit, remaining: limit - w.count, resetMs };
  }
}

/** How a 429 advises its wait: all hints (default), or one legal form alone, or the retry-after-unparseable defect. */
export type HintStyle = 'all' | 'http-date' | 'reset-only' | 'ms-only' | 'unparseable';

export function hintStyle(ctx: RequestContext): HintStyle {
  if (ctx.defect('retry-after-unparseable')) return 'unparseable';
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
    if (style === 'all') h['Retry-After'] = String(Math.max(1, Math.ceil(d.resetMs / 1000)));
    if (style === 'unparseable') h['Retry-After'] = 'soon';
    // An HTTP-date has whole seconds: the next second boundary after the window ends.
    if (style === 'http-date') h['Retry-After'] = new Date(Math.ceil((now + d.resetMs) / 1000) * 1000).toUTCString();
    if (style === 'all' || style === 'unparseable' || style === 'ms-only') h['retry-after-ms'] = String(d.resetMs);
  }
  return h;
}
