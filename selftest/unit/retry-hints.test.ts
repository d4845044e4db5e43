// lib/spec/retry-hints.ts: the one reader of 429 retry hints (suite, load harness, k6).
import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseResetDuration, parseRetryAfter, parseRetryAfterMs, readRetryHints, retryDelayMs } from '../../lib/spec/retry-hints.ts';
import { goDuration } from '../../reference/rate-limit.ts';

const NOW = Date.UTC(1994, 10, 6, 8, 49, 30); // 7 s before the RFC's example date

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('2', NOW)).toBe(2000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
  });
  it('reads an HTTP-date in all three forms a recipient must accept (§5.6.7), as UTC', () => {
    const at = Date.UTC(1994, 10, 6, 8, 49, 37);
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(at);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT')).toBe(at);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toBe(at);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(7000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:00 GMT', NOW)).toBe(0); // in the past: retry now
  });
  it('refuses what is neither', () => {
    for (const v of ['soon', '', '1.5', '-1', '5s', 'Sun, 31 Feb 1994 08:49:37 GMT', '2026-11-23T02:00:00Z', 'Sun, 06 Nov 1994 08:49:37 PST']) {
      expect(parseRetryAfter(v, NOW), v).toBeUndefined();
    }
  });
});

describe('retry-after-ms and x-ratelimit-reset-*', () => {
  it('reads retry-after-ms as a non-negative number', () => {
    expect(parseRetryAfterMs('250')).toBe(250);
    expect(parseRetryAfterMs('12.5')).toBe(12.5);
    for (const v of ['soon', '', '-3', '1e3', '5s']) expect(parseRetryAfterMs(v), v).toBeUndefined();
  });
  it('reads OpenAI-style durations', () => {
    expect(parseResetDuration('1s')).toBe(1000);
    expect(parseResetDuration('6m0s')).toBe(360_000);
    expect(parseResetDuration('20ms')).toBe(20);
    expect(parseResetDuration('1h2m3.5s')).toBe(3_723_500);
    for (const v of ['soon', '', '5', 's', '1x']) expect(parseResetDuration(v), v).toBeUndefined();
  });
  it('round-trips the reference\'s Go-style durations', () => {
    for (const ms of [0, 850, 1000, 1500, 60_500, 3_600_000]) expect(parseResetDuration(goDuration(ms))).toBe(ms);
  });
});

describe('readRetryHints', () => {
  it('takes the wait clients honour first and judges every hint present, in any header-name case', () => {
    const r = readRetryHints({ 'Retry-After': '2', 'Retry-After-Ms': '1500', 'X-Ratelimit-Reset-Requests': '1s' }, NOW);
    expect(r).toMatchObject({ waitMs: 1500, source: 'retry-after-ms', problems: [] });
    expect(r.hints.map((h) => h.header)).toEqual(['retry-after-ms', 'retry-after', 'x-ratelimit-reset-requests']);
  });
  it('accepts each legal form alone', () => {
    expect(readRetryHints({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }, NOW)).toMatchObject({ waitMs: 7000, problems: [] });
    expect(readRetryHints({ 'x-ratelimit-reset-requests': '1m0.5s' }, NOW)).toMatchObject({ waitMs: 60_500, problems: [] });
    expect(readRetryHints({ 'retry-after-ms': '40' }, NOW)).toMatchObject({ waitMs: 40, problems: [] });
  });
  it('reports an unparseable hint even beside a good one, and no hint at all', () => {
    const r = readRetryHints({ 'retry-after': 'soon', 'retry-after-ms': '900' }, NOW);
    expect(r.waitMs).toBe(900);
    expect(r.problems).toEqual(['Retry-After "soon" is neither whole seconds nor an HTTP date (RFC 9110 §10.2.3)']);
    expect(readRetryHints({ 'x-ratelimit-reset-tokens': 'later' }, NOW).problems[0]).toMatch(/x-ratelimit-reset-tokens "later" is not a duration/);
    expect(readRetryHints({}, NOW)).toEqual({ hints: [], problems: ['429 without Retry-After, retry-after-ms or x-ratelimit-reset-* headers'] });
  });
  it('retryDelayMs: the advised wait capped at 60 s, else 1 s doubling', () => {
    expect(retryDelayMs({ 'retry-after': '120' }, 0, NOW)).toBe(60_000);
    expect(retryDelayMs({ 'retry-after': 'soon' }, 2, NOW)).toBe(4000);
    expect(retryDelayMs({ 'x-ratelimit-reset-requests': '20ms' }, 0, NOW)).toBe(20);
  });
});
