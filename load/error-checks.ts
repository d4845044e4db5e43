// Checks on the answers a target sheds load with: the retry hints of a 429 (LIM-2): present, parseable,
// and consistent with each other, since a client honours whichever it reads first
// (openai-node: retry-after-ms, then Retry-After; LangChain: Retry-After only).
// The error-body rule itself is lib/error-body.ts, shared with the suite and the k6 bundles.

export interface RetryHint {
  /** The wait a client would honour, ms (undefined: the answer gives none). */
  waitMs?: number;
  source?: 'retry-after-ms' | 'retry-after' | 'x-ratelimit-reset-requests';
  problems: string[];
}

/** Longest wait the common clients honour (openai-node, Vercel ai, LangChain). */
export const MAX_HONOURED_WAIT_MS = 60_000;

export function checkRetryHeaders(h: Record<string, string>, now = Date.now()): RetryHint {
  const problems: string[] = [];
  const raMsRaw = h['retry-after-ms'];
  const raRaw = h['retry-after'];
  const resetRaw = h['x-ratelimit-reset-requests'];
  let raMs: number | undefined;
  let ra: number | undefined;
  let reset: number | undefined;

  if (raMsRaw !== undefined) {
    const n = Number(raMsRaw.trim());
    if (raMsRaw.trim() === '' || !Number.isFinite(n) || n < 0) problems.push(`retry-after-ms "${raMsRaw}" is not a non-negative number of milliseconds`);
    else raMs = n;
  }
  if (raRaw !== undefined) {
    const t = raRaw.trim();
    if (/^\d+$/.test(t)) ra = Number(t) * 1000;
    else if (!Number.isNaN(Date.parse(t)) && /[a-z]/i.test(t)) ra = Math.max(0, Date.parse(t) - now);
    else problems.push(`Retry-After "${raRaw}" is neither whole seconds nor an HTTP date`);
  }
  if (resetRaw !== undefined) {
    reset = parseResetDuration(resetRaw);
    if (reset === undefined) problems.push(`x-ratelimit-reset-requests "${resetRaw}" is not a duration such as 1s, 120ms or 6m0s`);
  }
  const anyHint = raMsRaw !== undefined || raRaw !== undefined || Object.keys(h).some((k) => k.startsWith('x-ratelimit-reset'));
  if (!anyHint) problems.push('429 without Retry-After, retry-after-ms or x-ratelimit-reset-* headers');

  // Retry-After is whole seconds, so it may round retry-after-ms up by up to a second.
  if (raMs !== undefined && ra !== undefined && (ra < raMs - 50 || ra > raMs + 1050)) {
    problems.push(`Retry-After (${ra / 1000} s) and retry-after-ms (${raMs} ms) disagree`);
  }
  if (reset !== undefined && raMs !== undefined && Math.abs(reset - raMs) > 1000) {
    problems.push(`x-ratelimit-reset-requests (${resetRaw}) and retry-after-ms (${raMs} ms) disagree`);
  }
  const remaining = h['x-ratelimit-remaining-requests'];
  const limit = h['x-ratelimit-limit-requests'];
  if (remaining !== undefined) {
    if (!/^\d+$/.test(remaining.trim())) problems.push(`x-ratelimit-remaining-requests "${remaining}" is not a whole number`);
    else if (Number(remaining) > 0) problems.push(`429 although x-ratelimit-remaining-requests says ${remaining} left`);
  }
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit.trim())) problems.push(`x-ratelimit-limit-requests "${limit}" is not a whole number`);
    else if (remaining !== undefined && /^\d+$/.test(remaining.trim()) && Number(remaining) > Number(limit)) {
      problems.push(`x-ratelimit-remaining-requests ${remaining} exceeds x-ratelimit-limit-requests ${limit}`);
    }
  }

  const hint: RetryHint = { problems };
  if (raMs !== undefined) Object.assign(hint, { waitMs: raMs, source: 'retry-after-ms' });
  else if (ra !== undefined) Object.assign(hint, { waitMs: ra, source: 'retry-after' });
  else if (reset !== undefined) Object.assign(hint, { waitMs: reset, source: 'x-ratelimit-reset-requests' });
  if (hint.waitMs !== undefined && hint.waitMs > MAX_HONOURED_WAIT_MS) {
    problems.push(`advised wait ${Math.round(hint.waitMs / 1000)} s is beyond the 60 s clients honour`);
  }
  return hint;
}

/** OpenAI's reset durations: "1s", "120ms", "6m0s", "1h2m3.5s". */
export function parseResetDuration(raw: string): number | undefined {
  const m = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/.exec(raw.trim());
  if (!m || raw.trim() === '') return undefined;
  const [, h, min, s, ms] = m;
  return Number(h ?? 0) * 3_600_000 + Number(min ?? 0) * 60_000 + Number(s ?? 0) * 1000 + Number(ms ?? 0);
}
