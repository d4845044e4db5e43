// Reads the run's configuration from the environment and rejects a bad one with a
// single line naming the variable and the fix, before any request is sent. The one
// place npm test reads its settings (their table: lib/run/settings.ts); the workers
// learn them from the run context (run-context.ts).
// These variable names are a contract: the load tools and k6 scripts read the same ones.
import { checkTargetUrl, type UrlParts } from '../spec/target-url.ts';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectionPattern } from './selection.ts';
import { mergeHeaderSources, parseHeaderLines, type ExtraHeader } from '../http/header-lines.ts';
import { ConfigError } from './config-error.ts';

export { ConfigError };

export interface Config {
  /** Base URL ending in /v1, without a trailing slash; undefined = embedded reference server. */
  targetUrl?: string;
  apiKey?: string;
  limitedApiKey?: string;
  brainId?: string;
  rateLimitApiKey?: string;
  rateLimitProbeMax: number;
  models: string[];
  timeoutMs: number;
  strict: boolean;
  /** HEADERS and HEADERS_FILE: sent on every request of the run (lib/http/extra-headers.ts). */
  extraHeaders: ExtraHeader[];
  /** The fuzz phase (suites/fuzz.test.ts). */
  fuzz: FuzzConfig;
  /** CLAUSES as given (checked: every glob matches a clause); undefined = all. */
  clauses?: string;
  /** RETRY_FAILED: reruns of an unexpected failure, 0 to 10. */
  retryFailed: number;
  /** EXPECTATIONS: the file of known failures as given (lib/run/expectations.ts reads it). */
  expectationsFile?: string;
  /** REPORTS_DIR, absolute; default the project's reports/. */
  reportsDir: string;
  /** GITHUB_STEP_SUMMARY: summary.md is appended to this file. */
  githubStepSummary?: string;
  /** REFERENCE_DEFECT / REFERENCE_VARIANTS: the embedded target's defect and variants (names checked by checkReferenceNames). */
  reference: { defect?: string; variants: string[] };
  /** Self-test seams (docs/RUNNER.md), not for users. */
  selftest: { suites?: string; crash: boolean; progress: boolean };
}

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

// --- fuzz phase knobs -------------------------------------------------------------
export interface FuzzConfig {
  /** FUZZ_RUNS: generated requests in the campaign; 0 turns the phase off. */
  runs: number;
  /** FUZZ_SEED: undefined until the runner draws one (then it goes to the workers in the run context). */
  seed: number | undefined;
  /** FUZZ_TIME_MS: no new generated request after this long; shrinking stops too. */
  timeMs: number;
  /** FUZZ_CONCURRENCY: generated requests in flight at once. */
  concurrency: number;
  /** FUZZ_MAX_BODY_BYTES: no generated body is larger. */
  maxBodyBytes: number;
  /** FUZZ_REPLAY: "<case>@<path>" of a reported failure: only that request is sent. */
  replay: { caseIndex: number; path: string } | undefined;
}

export const FUZZ_DEFAULT_RUNS = 200;
export const FUZZ_MAX_SEED = 2 ** 31 - 1;

export function loadFuzzConfig(env: NodeJS.ProcessEnv): FuzzConfig {
  const replayRaw = nonEmpty(env, 'FUZZ_REPLAY');
  let replay: FuzzConfig['replay'];
  if (replayRaw !== undefined) {
    // <case>@<path>: a random case (path 0:3:1) or a coverage request (path c, c:<probe>, c:<probe>:<size>).
    const m = /^(\d+)@(\d+(?::\d+)*|c(?::\d+){0,2})$/.exec(replayRaw);
    if (!m) throw new ConfigError('FUZZ_REPLAY', `"${replayRaw}" is not <case>@<path> (e.g. 17@0:3:1 or 4@c:2); copy it from the fuzz failure's replay command`);
    replay = { caseIndex: Number(m[1]), path: m[2]! };
  }
  const seedRaw = nonEmpty(env, 'FUZZ_SEED');
  if (replay && seedRaw === undefined) throw new ConfigError('FUZZ_SEED', 'is required with FUZZ_REPLAY; copy both from the replay command');
  return {
    runs: integer(env, 'FUZZ_RUNS', FUZZ_DEFAULT_RUNS, 0, 1_000_000),
    seed: seedRaw === undefined ? undefined : integer(env, 'FUZZ_SEED', 0, 0, FUZZ_MAX_SEED),
    timeMs: integer(env, 'FUZZ_TIME_MS', 60_000, 1_000, 86_400_000),
    concurrency: integer(env, 'FUZZ_CONCURRENCY', 4, 1, 64),
    maxBodyBytes: integer(env, 'FUZZ_MAX_BODY_BYTES', 64 * 1024, 1024, 8 * 1024 * 1024),
    replay,
  };
}
// --- end fuzz phase knobs ---------------------------------------------------------------


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a whole number; set it to an integer between ${min} and ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `${n} is out of range; set it between ${min} and ${max}`);
  return n;
}

function retryCount(env: NodeJS.ProcessEnv): number {
  const raw = nonEmpty(env, 'RETRY_FAILED');
  if (raw === undefined) return 0;
  if (!/^\d+$/.test(raw) || Number(raw) > 10) throw new ConfigError('RETRY_FAILED', `"${raw}" is not a whole number from 0 to 10; set how many times a failing test is rerun`);
  return Number(raw);
}

/** Normalises and checks TARGET_URL by the rules of lib/spec/target-url.ts (parsed with Node's URL class). */
export function parseTargetUrl(raw: string): string {
  let parts: UrlParts | undefined;
  try {
    const url = new URL(raw);
    parts = {
      scheme: url.protocol.replace(/:$/, ''), origin: url.origin, pathname: url.pathname,
      hasCredentials: !!(url.username || url.password), hasQueryOrFragment: !!(url.search || url.hash),
    };
  } catch { /* not a URL: the rule says so */ }
  const r = checkTargetUrl(raw, parts);
  if ('problem' in r) throw new ConfigError('TARGET_URL', r.problem);
  return r.base;
}

/** HEADERS (lines of "Name: value") and HEADERS_FILE (a file of them), checked by lib/http/header-lines.ts. */
export function loadExtraHeaders(env: NodeJS.ProcessEnv = process.env): ExtraHeader[] {
  const inline = env.HEADERS !== undefined && env.HEADERS.trim() !== '' ? parseHeaderLines(env.HEADERS) : { headers: [] };
  if ('problem' in inline) throw new ConfigError('HEADERS', inline.problem);
  const file = nonEmpty(env, 'HEADERS_FILE');
  if (file === undefined) return inline.headers;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('HEADERS_FILE', `${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give a file of "Name: value" lines`);
  }
  const fromFile = parseHeaderLines(text);
  if ('problem' in fromFile) throw new ConfigError('HEADERS_FILE', `${file}: ${fromFile.problem}`);
  const merged = mergeHeaderSources(inline.headers, fromFile.headers, 'HEADERS_FILE');
  if ('problem' in merged) throw new ConfigError('HEADERS_FILE', merged.problem);
  return merged.headers;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const rawTarget = nonEmpty(env, 'TARGET_URL');
  const targetUrl = rawTarget === undefined ? undefined : parseTargetUrl(rawTarget);
  const apiKey = nonEmpty(env, 'API_KEY');
  if (targetUrl && !apiKey) {
    throw new ConfigError('API_KEY', 'is required when TARGET_URL is set; export API_KEY=<a key holding brains:invoke>');
  }
  for (const name of ['API_KEY', 'LIMITED_API_KEY', 'RATE_LIMIT_API_KEY']) {
    const v = nonEmpty(env, name);
    // A key with whitespace or control characters cannot be sent in a header as-is.
    if (v !== undefined && !/^[\x21-\x7e]+$/.test(v)) {
      throw new ConfigError(name, 'contains spaces or non-printable characters; paste the key alone');
    }
  }
  const brainId = nonEmpty(env, 'BRAIN_ID');
  if (brainId !== undefined && !UUID.test(brainId)) {
    throw new ConfigError('BRAIN_ID', `"${brainId}" is not a uuid; set it to the id of a brain API_KEY may invoke`);
  }
  const modelsRaw = nonEmpty(env, 'MODELS');
  const models = (modelsRaw ?? 'svc-auto,svc').split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new ConfigError('MODELS', 'lists no model; give a comma list such as svc-auto,svc');
  const clauses = nonEmpty(env, 'CLAUSES');
  selectionPattern(clauses); // throws on a glob that matches no clause
  const strictRaw = nonEmpty(env, 'STRICT');
  if (strictRaw !== undefined && !['0', '1', 'true', 'false'].includes(strictRaw)) {
    throw new ConfigError('STRICT', `"${strictRaw}" is not 1 or 0`);
  }
  return {
    targetUrl,
    apiKey,
    limitedApiKey: nonEmpty(env, 'LIMITED_API_KEY'),
    brainId,
    rateLimitApiKey: nonEmpty(env, 'RATE_LIMIT_API_KEY'),
    rateLimitProbeMax: integer(env, 'RATE_LIMIT_PROBE_MAX', 300, 0, 100_000),
    models,
    timeoutMs: integer(env, 'TIMEOUT_MS', 30_000, 100, 3_600_000),
    strict: strictRaw === '1' || strictRaw === 'true',
    extraHeaders: loadExtraHeaders(env),
    fuzz: loadFuzzConfig(env),
    clauses,
    retryFailed: retryCount(env),
    expectationsFile: nonEmpty(env, 'EXPECTATIONS'),
    reportsDir: resolve(nonEmpty(env, 'REPORTS_DIR') ?? resolve(PROJECT_ROOT, 'reports')),
    githubStepSummary: nonEmpty(env, 'GITHUB_STEP_SUMMARY'),
    reference: {
      ...(nonEmpty(env, 'REFERENCE_DEFECT') ? { defect: nonEmpty(env, 'REFERENCE_DEFECT') } : {}),
      variants: (env.REFERENCE_VARIANTS ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    },
    selftest: { suites: nonEmpty(env, 'CHATGATE_SELFTEST_SUITES')?.replace(/\/+$/, ''), crash: env.CHATGATE_SELFTEST_CRASH === '1', progress: env.CHATGATE_SELFTEST_PROGRESS === '1' },
  };
}

/**
 * The one check of the embedded reference's defect and variant names (REFERENCE_DEFECT,
 * REFERENCE_VARIANTS) against the names the reference has; lib/ does not import reference/,
 * so the caller passes them.
 */
export function checkReferenceNames(choice: Config['reference'], names: { defects: readonly string[]; variants: readonly string[] }): void {
  if (choice.defect !== undefined && !names.defects.includes(choice.defect)) {
    throw new ConfigError('REFERENCE_DEFECT', `"${choice.defect}" is not a defect of the reference server; npm run reference -- --list shows them`);
  }
  for (const v of choice.variants) {
    if (!names.variants.includes(v)) throw new ConfigError('REFERENCE_VARIANTS', `"${v}" is not a variant of the reference server; npm run reference -- --list shows them`);
  }
}
