// Checks on the answers a target sheds load with: the retry hints of a 429 (LIM-2): present, parseable,
// and consistent with each other, since a client honours whichever it reads first
// (openai-node: retry-after-ms, then Retry-After; LangChain: Retry-After only).
// The error-body rule itself is lib/spec/error-body.ts, shared with the suite and the k6 bundles.
import { MAX_HONOURED_WAIT_MS, parseResetDuration, readRetryHints } from '../../lib/spec/retry-hints.ts';

export interface RetryHint {
  /** The wait a client would honour, ms (undefined: the answer gives none). */
  waitMs?: number;
  source?: string;
  problems: string[];
}

export { MAX_HONOURED_WAIT_MS, parseResetDuration };

export function checkRetryHeaders(h: Record<string, string>, now = Date.now()): RetryHint {
  // Presence and parsing: lib/spec/retry-hints.ts, the parser the suite and the k6 scripts use too.
  const read = readRetryHints(h, now);
  const problems = [...read.problems];
  const waitOf = (name: string) => read.hints.find((x) => x.header === name)?.waitMs;
  const raMs = waitOf('retry-after-ms');
  const ra = waitOf('retry-after');
  const reset = waitOf('x-ratelimit-reset-requests');
  const resetRaw = h['x-ratelimit-reset-requests'];

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
  if (read.waitMs !== undefined) Object.assign(hint, { waitMs: read.waitMs, source: read.source });
  if (hint.waitMs !== undefined && hint.waitMs > MAX_HONOURED_WAIT_MS) {
    problems.push(`advised wait ${Math.round(hint.waitMs / 1000)} s is beyond the 60 s clients honour`);
  }
  return hint;
}
