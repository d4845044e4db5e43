// The one reader of a 429's retry hints (LIM-2), shared by the suite, the load
// harness and the k6 scripts (bundled by esbuild: no Node imports, ES2017 APIs only).
// What is legal comes from the sources, not from one server's habits:
// - Retry-After: delta-seconds (1*DIGIT) or an HTTP-date in any of the three forms a
//   recipient must accept (RFC 9110 §10.2.3, §5.6.7: IMF-fixdate, RFC 850, asctime);
// - retry-after-ms: a non-negative number of milliseconds (openai-node reads it first);
// - x-ratelimit-reset-*: OpenAI-style durations (Go's time.Duration text: "1s", "6m0s",
//   "20ms", "1h2m3.5s").
// A hint that is present but does not parse is a problem: a client reading it gets nothing.

/** Longest wait the common clients honour (openai-node, Vercel ai, LangChain). */
export const MAX_HONOURED_WAIT_MS = 60_000;

export type HintSource = 'retry-after-ms' | 'retry-after' | string;

export interface ParsedHint {
  /** Lower-case header name. */
  header: string;
  raw: string;
  /** The wait it advises, ms; undefined when the value does not parse. */
  waitMs?: number;
  /** Why it does not parse. */
  problem?: string;
}

export interface RetryHints {
  /** Every hint header present, in the order clients read them. */
  hints: ParsedHint[];
  /** The wait a client honours: retry-after-ms, then Retry-After, then x-ratelimit-reset-requests, then any other reset. */
  waitMs?: number;
  source?: HintSource;
  /** Unparseable values, or no hint at all. */
  problems: string[];
}

export const NO_HINT = '429 without Retry-After, retry-after-ms or x-ratelimit-reset-* headers';

/** retry-after-ms: a non-negative decimal number of milliseconds. */
export function parseRetryAfterMs(raw: string): number | undefined {
  const t = raw.trim();
  return /^\d+(\.\d+)?$/.test(t) ? Number(t) : undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MON = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MON} (\\d{4}) ${TIME} GMT$`);
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MON}-(\\d{2}) ${TIME} GMT$`);
// Sun Nov  6 08:49:37 1994
const ASCTIME = new RegExp(`^${DAY} ${MON} ([ \\d]\\d) ${TIME} (\\d{4})$`);

function utc(year: number, mon: string, day: number, h: string, m: string, s: string): number | undefined {
  const month = MONTHS.indexOf(mon.toLowerCase());
  const hh = Number(h); const mm = Number(m); const ss = Number(s);
  if (day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60) return undefined;
  const t = Date.UTC(year, month, day, hh, mm, Math.min(ss, 59));
  // Reject 31 Feb and the like: Date.UTC rolls them over into the next month.
  return new Date(t).getUTCDate() === day ? t : undefined;
}

/** An HTTP-date (RFC 9110 §5.6.7) as epoch ms, in any of its three forms; asctime is UTC, not local time. */
export function parseHttpDate(raw: string): number | undefined {
  const t = raw.trim();
  let m = IMF_FIXDATE.exec(t);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850.exec(t);
  if (m) {
    // RFC 9110: a two-digit year more than 50 years in the future means the past century.
    const yy = Number(m[3]);
    const now = new Date().getUTCFullYear();
    let year = Math.floor(now / 100) * 100 + yy;
    if (year > now + 50) year -= 100;
    return utc(year, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME.exec(t);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
  return undefined;
}

/** Retry-After as a wait in ms: delta-seconds, or an HTTP-date (a date in the past means now). */
export function parseRetryAfter(raw: string, now = Date.now()): number | undefined {
  const t = raw.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const date = parseHttpDate(t);
  return date === undefined ? undefined : Math.max(0, date - now);
}

const DURATION = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/;

/** OpenAI's x-ratelimit-reset-* durations: "1s", "120ms", "6m0s", "1h2m3.5s". */
export function parseResetDuration(raw: string): number | undefined {
  const t = raw.trim();
  const m = DURATION.exec(t);
  if (!m || t === '') return undefined;
  const [, h, min, s, ms] = m;
  return Number(h || 0) * 3_600_000 + Number(min || 0) * 60_000 + Number(s || 0) * 1000 + Number(ms || 0);
}

/** Header names lower-cased (k6 canonicalises them: "Retry-After-Ms"); repeated fields are joined as received. */
export function lowerCaseHeaders(headers: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(headers)) {
    const v = headers[k];
    if (v !== undefined) out[k.toLowerCase()] = v;
  }
  return out;
}

/** Reads every retry hint of an answer (any header-name case) and the wait a client would honour. */
export function readRetryHints(headers: Record<string, string | undefined>, now = Date.now()): RetryHints {
  const h = lowerCaseHeaders(headers);
  const hints: ParsedHint[] = [];
  const add = (header: string, parse: (raw: string) => number | undefined, problem: (raw: string) => string) => {
    const raw = h[header];
    if (raw === undefined) return;
    const waitMs = parse(raw);
    hints.push(waitMs === undefined ? { header, raw, problem: problem(raw) } : { header, raw, waitMs });
  };
  add('retry-after-ms', parseRetryAfterMs, (raw) => `retry-after-ms "${raw}" is not a non-negative number of milliseconds`);
  add('retry-after', (raw) => parseRetryAfter(raw, now), (raw) => `Retry-After "${raw}" is neither whole seconds nor an HTTP date (RFC 9110 §10.2.3)`);
  const resets = Object.keys(h).filter((k) => k.indexOf('x-ratelimit-reset') === 0).sort((a, b) =>
    (a === 'x-ratelimit-reset-requests' ? -1 : b === 'x-ratelimit-reset-requests' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  for (const k of resets) add(k, parseResetDuration, (raw) => `${k} "${raw}" is not a duration such as 1s, 120ms or 6m0s`);
  const problems = hints.filter((x) => x.problem !== undefined).map((x) => x.problem!);
  if (hints.length === 0) problems.push(NO_HINT);
  const first = hints.filter((x) => x.waitMs !== undefined)[0];
  return first ? { hints, waitMs: first.waitMs, source: first.header, problems } : { hints, problems };
}

/** Delay before re-sending after a 429: the advised wait (capped at 60 s), else 1 s doubling per attempt. */
export function retryDelayMs(headers: Record<string, string | undefined>, attempt: number, now = Date.now()): number {
  const { waitMs } = readRetryHints(headers, now);
  if (waitMs !== undefined) return Math.min(waitMs, MAX_HONOURED_WAIT_MS);
  return 1000 * Math.pow(2, attempt);
}
