// Reads the k6 scripts' configuration from __ENV. The target variables are the ones
// lib/run/config.ts reads (TARGET_URL, API_KEY, LIMITED_API_KEY, BRAIN_ID,
// RATE_LIMIT_API_KEY, MODELS, TIMEOUT_MS) with the same rules and the same
// one-line "VARIABLE: what is wrong; the fix" errors; the load settings (RATE,
// DURATION, VUS, ...) are k6-only. lib/run/config.ts cannot be imported here: k6 has
// no URL class and no process.env.
//
// Deliberately no K6_ prefix: k6 itself reads K6_* variables as options
// (K6_DURATION, K6_VUS) and they would override the scenarios built here.
import { headerRecord, parseHeaderLines, type ExtraHeader } from '../../../lib/http/header-lines.ts';
import { maskProxyUrl, PROXY_VARIABLES } from '../../../lib/http/proxy-mask.ts';
import { checkTargetUrl, type UrlParts } from '../../../lib/spec/target-url.ts';
import { durationMs } from './duration.ts';

/**
 * Deliberately not an Error: k6 prints an uncaught Error with its JS stack trace, a
 * plain object as its toString(), so a configuration error stays one line (exit 107).
 */
export class ConfigError {
  readonly name = 'ConfigError';
  readonly message: string;
  constructor(readonly variable: string, message: string) {
    this.message = `chatgate k6: ${variable}: ${message}`;
  }
  toString(): string {
    return this.message;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DURATION = /^(\d+(\.\d+)?(ms|s|m|h))+$/;

export function env(name: string): string | undefined {
  const v = __ENV[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function integer(name: string, fallback: number, min: number, max: number): number {
  const raw = env(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a whole number; set it to an integer between ${min} and ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `${n} is out of range; set it between ${min} and ${max}`);
  return n;
}

export function fraction(name: string, fallback: number): number {
  const raw = env(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || !(n >= 0 && n <= 1)) throw new ConfigError(name, `"${raw}" is not a fraction; set it between 0 and 1, e.g. 0.01`);
  return n;
}

export function duration(name: string, fallback: string): string {
  const raw = env(name) ?? fallback;
  if (!DURATION.test(raw)) throw new ConfigError(name, `"${raw}" is not a k6 duration; use e.g. 30s, 2m, 1m30s, 500ms`);
  return raw;
}

export function flag(name: string, fallback: boolean): boolean {
  const raw = env(name);
  if (raw === undefined) return fallback;
  if (!['0', '1', 'true', 'false'].includes(raw)) throw new ConfigError(name, `"${raw}" is not 1 or 0`);
  return raw === '1' || raw === 'true';
}

/** Milliseconds of a k6 duration string ("1m30s" -> 90000). */
export { durationMs };

/** TARGET_URL by the rules of lib/spec/target-url.ts, parsed with a pattern (no URL class in k6). */
export function parseTargetUrl(raw: string): string {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/.exec(raw);
  const parts: UrlParts | undefined = !m || m[2] === '' ? undefined : {
    scheme: m[1]!.toLowerCase(), origin: `${m[1]!.toLowerCase()}://${m[2]!.toLowerCase()}`, pathname: m[3] ?? '',
    hasCredentials: m[2]!.includes('@'), hasQueryOrFragment: m[4] !== undefined || m[5] !== undefined,
  };
  const r = checkTargetUrl(raw, parts);
  if ('problem' in r) throw new ConfigError('TARGET_URL', r.problem);
  return r.base;
}

function key(name: string): string | undefined {
  const v = env(name);
  // A key with whitespace or control characters cannot be sent in a header as-is.
  if (v !== undefined && !/^[\x21-\x7e]+$/.test(v)) throw new ConfigError(name, 'contains spaces or non-printable characters; paste the key alone');
  return v;
}

export interface TargetConfig {
  targetUrl: string;
  /** '' when unset: setup() stops the run before any load (see requireKey). */
  apiKey: string;
  rateLimitApiKey: string | undefined;
  brainId: string | undefined;
  models: string[];
  timeoutMs: number;
}

export function targetConfig(need: { brain?: boolean } = {}): TargetConfig {
  const rawTarget = env('TARGET_URL');
  if (rawTarget === undefined) {
    // Unlike npm test, k6 cannot start the embedded reference itself.
    throw new ConfigError('TARGET_URL', 'is required for k6 runs; export TARGET_URL=https://host/v1 (or start a local target with `npm run reference -- --json`)');
  }
  const targetUrl = parseTargetUrl(rawTarget);
  // A missing key is reported by setup() (lib/reachability.ts), not here: init code also
  // runs under `k6 archive` and `k6 inspect` (the k6-operator's initializer), which see
  // only -e variables, and a key given with -e would be written into the archive. So the
  // init code needs no key; only its form is checked when one is set.
  const apiKey = key('API_KEY') ?? '';
  key('LIMITED_API_KEY'); // checked for parity with lib/run/config.ts; no k6 script sends it
  const rateLimitApiKey = key('RATE_LIMIT_API_KEY');
  const brainId = env('BRAIN_ID');
  if (brainId !== undefined && !UUID.test(brainId)) throw new ConfigError('BRAIN_ID', `"${brainId}" is not a uuid; set it to the id of a brain API_KEY may invoke`);
  if (need.brain && brainId === undefined) throw new ConfigError('BRAIN_ID', 'is required by this script; set it to the id of a brain API_KEY may invoke');
  const models = (env('MODELS') ?? 'svc-auto,svc').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (models.length === 0) throw new ConfigError('MODELS', 'lists no model; give a comma list such as svc-auto,svc');
  extraHeaderList(); // a bad HEADERS stops the run at init, before any request
  return { targetUrl, apiKey, rateLimitApiKey, brainId, models, timeoutMs: integer('TIMEOUT_MS', 30000, 100, 3600000) };
}

/** The one-line error for a missing API_KEY, or undefined when it is set (checked in setup()). */
export function missingKey(cfg: TargetConfig): ConfigError | undefined {
  return cfg.apiKey === '' ? new ConfigError('API_KEY', 'is required when TARGET_URL is set; export API_KEY=<a key holding brains:invoke> (in the environment, not with -e: -e values are visible in ps and written into k6 archives)') : undefined;
}

let extra: { list: ExtraHeader[]; record: Record<string, string> } | undefined;

/** HEADERS ("Name: value" lines, the rules of lib/http/header-lines.ts, as npm test): sent on every request. */
export function extraHeaderList(): ExtraHeader[] {
  if (extra) return extra.list;
  // k6 can read a file only in init code, through open(); the file's lines go in HEADERS instead.
  if (env('HEADERS_FILE') !== undefined) throw new ConfigError('HEADERS_FILE', 'is not read by the k6 scripts; pass the lines in HEADERS instead: HEADERS="$(cat file)" k6 run ...');
  const raw = __ENV.HEADERS;
  const parsed = raw === undefined || raw.trim() === '' ? { headers: [] } : parseHeaderLines(raw);
  if ('problem' in parsed) throw new ConfigError('HEADERS', parsed.problem);
  extra = { list: parsed.headers, record: headerRecord(parsed.headers) };
  return extra.list;
}

/** The HEADERS as request headers (names in lower case). */
export function extraHeaders(): Record<string, string> {
  extraHeaderList();
  return extra!.record;
}

/**
 * HEADERS as a summary records it: every secret value *** whatever its length, by the
 * rule that masks it in curl lines (header-lines.ts's `secret`), harmless values as given.
 */
export function headersSetting(): string | undefined {
  if (env('HEADERS') === undefined) return undefined;
  let headers: ExtraHeader[] = [];
  try { headers = extraHeaderList(); } catch { return undefined; /* reported by targetConfig() at init */ }
  return headers.map((h) => `${h.name}: ${h.secret ? '***' : h.value}`).join('\n');
}

/** The proxy variables the runner ran with (k6 reads them as Go does), credentials masked; {} when it went direct. */
export function proxySetting(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) {
    const v = env(name);
    if (v !== undefined) out[name] = maskProxyUrl(v);
  }
  return out;
}

/** Every secret the run was given (keys, secret HEADERS values): redacted from logs and summaries. */
export function secretValues(): string[] {
  const out: string[] = [];
  for (const name of ['API_KEY', 'LIMITED_API_KEY', 'RATE_LIMIT_API_KEY']) {
    const v = env(name);
    if (v !== undefined && v.length >= 4) out.push(v);
  }
  let headers: ExtraHeader[] = [];
  try { headers = extraHeaderList(); } catch { /* reported by targetConfig() */ }
  for (const h of headers) if (h.secret && h.value.length >= 4) out.push(h.value);
  return out;
}

export function redact(text: string): string {
  let out = text;
  for (const s of secretValues()) out = out.split(s).join('[redacted]');
  return out;
}
