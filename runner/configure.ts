// The configure phase of npm test: the arguments, the settings (lib/run/config.ts), the
// expectations file, the run's secrets and, for a remote target, the preflight. A bad
// value is one line on stderr and exit 2, before any request of the suite.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, FUZZ_MAX_SEED, loadConfig, type Config } from '../lib/run/config.ts';
import { redact, redactDeep } from '../lib/run/redact.ts';
import { registerRunSecrets } from '../lib/http/extra-headers.ts';
import { oneLineWarnings } from '../lib/http/header-lines.ts';
import { preflight } from '../lib/http/preflight.ts';
import { toCurl } from '../lib/http/curl.ts';
import type { RunMode } from '../lib/run/verdicts.ts';
import { checkNamePattern } from '../lib/run/selection.ts';
import { checkTestIds, isTestId, loadExpectations, type ExpectationsFile } from '../lib/run/expectations.ts';
import { summariseParts, type ExchangeSummary } from '../harness/exchange-log.ts';
import { collectTests } from './vitest-run.ts';
import { state } from './run-state.ts';

export interface Args { help: boolean; listTests: boolean; updateExpectations: boolean; testNamePattern?: string; files: string[] }

/** What the later phases need: the validated settings and what the runner decided from them. */
export interface Plan {
  config: Config;
  args: Args;
  expectations?: ExpectationsFile;
  /** FUZZ_SEED, or the one drawn for this run: every worker gets the same. */
  fuzzSeed: number;
  mode: RunMode;
  /** The preflight's answer (remote target): an exchange of the run, judged by the per-response rules. */
  preflightExchange?: ExchangeSummary;
}

/** One line naming the problem and the fix, exit 2. */
export function configError(message: string): never {
  process.stderr.write(`chatgate: configuration error: ${redact(message)}\n`);
  process.exit(2);
}

/** Runs `fn`; a ConfigError it throws is a configuration error (exit 2). */
export async function orConfigError<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ConfigError) configError(err.message);
    throw err;
  }
}

export function parseCli(argv: string[]): Args {
  try {
    const { values, positionals } = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: { help: { type: 'boolean', short: 'h' }, 'list-tests': { type: 'boolean' }, 'update-expectations': { type: 'boolean' }, testNamePattern: { type: 'string', short: 't' } },
    });
    return { help: !!values.help, listTests: !!values['list-tests'], updateExpectations: !!values['update-expectations'], testNamePattern: values.testNamePattern, files: positionals };
  } catch (err) {
    throw new ConfigError('arguments', `${(err as Error).message.split('\n')[0]}; npm test -- --help lists them`);
  }
}

/** --list-tests: every test's stable id and title; a probe without a streaming form says why. */
export async function listTests(env: NodeJS.ProcessEnv): Promise<void> {
  // Collecting needs no target: TARGET_URL (and so API_KEY) is not asked for; the other knobs are checked.
  const knobs = loadConfig({ ...env, TARGET_URL: undefined });
  for (const t of (await collectTests(knobs)).sort((a, b) => a.id.localeCompare(b.id))) {
    console.log(`${t.id}\t${t.title}${t.noStreamForm ? `\t(no streaming form: ${t.noStreamForm})` : ''}`);
  }
}

/** The settings, the expectations file and the secrets; then, for a remote target, the preflight. */
export async function configure(args: Args, env: NodeJS.ProcessEnv): Promise<Plan> {
  const { config, expectations } = await orConfigError(() => settings(args, env));
  // One seed for every worker (the run context), always shown.
  const fuzzSeed = config.fuzz.seed ?? Math.floor(Math.random() * FUZZ_MAX_SEED);
  const mode: RunMode = {
    fuzz: { runs: config.fuzz.runs, seed: fuzzSeed, timeMs: config.fuzz.timeMs, concurrency: config.fuzz.concurrency, maxBodyBytes: config.fuzz.maxBodyBytes, ...(config.fuzz.replay ? { replay: `${config.fuzz.replay.caseIndex}@${config.fuzz.replay.path}` } : {}) },
    strict: config.strict, clauses: config.clauses, testNamePattern: args.testNamePattern,
    files: args.files.length ? args.files : undefined, retryFailed: config.retryFailed,
    expectations: config.expectationsFile, updateExpectations: args.updateExpectations,
  };
  registerRunSecrets({ API_KEY: config.apiKey, LIMITED_API_KEY: config.limitedApiKey, RATE_LIMIT_API_KEY: config.rateLimitApiKey });
  for (const w of oneLineWarnings(config.extraHeaders)) process.stderr.write(`chatgate: warning: HEADERS: ${w}\n`);
  return { config, args, expectations, fuzzSeed, mode, preflightExchange: await preflightOf(config) };
}

async function settings(args: Args, env: NodeJS.ProcessEnv): Promise<{ config: Config; expectations?: ExpectationsFile }> {
  const config = loadConfig(env);
  Object.assign(state, { target: config.targetUrl, reportsDir: config.reportsDir, githubStepSummary: config.githubStepSummary });
  checkNamePattern(args.testNamePattern);
  const expectations = config.expectationsFile ? loadExpectations(resolve(config.expectationsFile)) : undefined;
  if (args.updateExpectations && !expectations) throw new ConfigError('--update-expectations', 'needs EXPECTATIONS=<file> to update');
  // Test ids are known once vitest has collected the suite files (imports only, no request).
  if (expectations?.entries.some((e) => isTestId(e.id))) {
    const index = await collectTests(config);
    for (const w of checkTestIds(expectations, new Set(index.map((t) => t.id)), new Map(index.filter((t) => t.legacyId).map((t) => [t.legacyId!, t.id])))) process.stderr.write(`chatgate: warning: ${w}\n`);
  }
  return { config, expectations };
}

/** Staging: one request before any test; no HTTP answer at all is exit 2, no report, no history. */
async function preflightOf(config: Config): Promise<ExchangeSummary | undefined> {
  if (!config.targetUrl) return undefined;
  const pre = await orConfigError(() => preflight({ targetUrl: config.targetUrl!, apiKey: config.apiKey!, timeoutMs: config.timeoutMs }));
  for (const w of pre.warnings) process.stderr.write(`chatgate: warning: ${redact(w)}\n`);
  if (pre.unreachable) configError(`${pre.unreachable.variable}: ${pre.unreachable.message}`);
  if (!pre.answer || pre.status === undefined) return undefined;
  return redactDeep(summariseParts({
    source: 'preflight', method: 'GET', url: pre.answer.url, status: pre.status, headers: pre.answer.headers, text: pre.answer.text,
    curl: toCurl({ method: 'GET', url: pre.answer.url, headers: { Authorization: 'Bearer ***' } }),
  }, 'preflight'));
}
