// Fixed-window request limits per key, and the headers that advertise them
// (OpenAI's x-ratelimit-* plus Retry-After / retry-after-ms on a 429).
import type { KeyRecord, KeyName } from './keys.ts';

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

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const h: Record<string, string> = {
    'x-ratelimit-limit-requests': String(d.limit),
    'x-ratelimit-remaining-requests': String(d.remaining),
    'x-ratelimit-reset-requests': `${d.resetMs}ms`,
  };
  if (!d.allowed) {
    h['Retry-After'] = String(Math.max(1, Math.ceil(d.resetMs / 1000)));
    h['retry-after-ms'] = String(d.resetMs);
  }
  return h;
}
