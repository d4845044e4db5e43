// npm test: the conformance run. Validates the configuration and the expectations
// file (exit 2 before any request if either is wrong), starts the embedded reference
// server when TARGET_URL is unset, runs suites/ under vitest, reruns unexpected
// failures (RETRY_FAILED), adds the run-wide checks, applies the known failures
// (EXPECTATIONS), writes the reports and exits 0 (no failure), 1 (an unexpected
// MUST/COMPAT failure or unexpected pass; SHOULD and flaky too in strict mode), 2
// (configuration error) or 3 (the runner itself crashed: the reports say what
// happened). Interrupted (SIGINT, SIGTERM), it writes the reports of the tests that
// completed, marked incomplete, and exits 128 + the signal's number (130, 143).
// The runner contract: docs/RUNNER.md.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, FUZZ_MAX_SEED, checkReferenceNames, loadConfig, type Config } from '../lib/run/config.ts';
import { EMBEDDED_KEY_VARIABLES, keyVariables, runContextOf, writeRunContext, type TargetRef } from '../lib/run/run-context.ts';
import { redact, redactDeep } from '../lib/run/redact.ts';
import { registerRunSecrets } from '../lib/http/extra-headers.ts';
import { oneLineWarnings } from '../lib/http/header-lines.ts';
import { preflight } from '../lib/http/preflight.ts';
import { bypassProxyFor } from '../lib/http/proxy.ts';
import { RESULTS_VERSION, failsTheRun, isHarnessError, runFails, summarise, type Results, type RunMode, type TestRecord } from '../lib/run/verdicts.ts';
import { allOf, checkNamePattern, selectionPattern, selectionMatches } from '../lib/run/selection.ts';
import { applyExpectations, checkTestIds, isNamed, isTestId, loadExpectations, removeEntries, type ExpectationsFile } from '../lib/run/expectations.ts';
import { VerdictCollector } from '../runner/verdict-collector.ts';
import { summariseParts, type ExchangeSummary } from '../harness/exchange-log.ts';
import { toCurl } from '../lib/http/curl.ts';
import { foldIntoProbes, runWideChecks } from '../runner/run-wide-checks.ts';
import { collectTests, readExchanges, retryFailures, runSuites } from '../runner/vitest-run.ts';
import { startGovernorServer, type GovernorServer } from '../runner/governor-server.ts';
import { THROTTLED } from '../lib/run/back-off.ts';
import { writeResultsJson } from '../runner/report/results-json.ts';
import { writeJunit } from '../runner/report/junit.ts';
import { writeMarkdown } from '../runner/report/markdown.ts';
import { writeHtml } from '../runner/report/html.ts';
import { renderConsole } from '../runner/report/console.ts';
import { archiveRun, compareRuns, previousRun } from '../runner/report/history.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HELP = `Usage: npm test [-- [--update-expectations] [-t <pattern>] [file filters...]]
       (conformance run; configuration from the environment)

  TARGET_URL            base URL ending in /v1 (unset: embedded reference server)
  API_KEY               key holding brains:invoke (required with TARGET_URL)
  LIMITED_API_KEY       valid key lacking brains:invoke (AUTH-6/7)
  BRAIN_ID              uuid of a brain API_KEY may invoke
  RATE_LIMIT_API_KEY    key the rate-limit probe may exhaust (default API_KEY)
  RATE_LIMIT_PROBE_MAX  most requests the probe sends; 0 disables it (300)
  MODELS                comma list of model ids (svc-auto,svc)
  TIMEOUT_MS            limit for one request including its body or stream (30000)
  STRICT=1              SHOULD warnings and flaky tests fail the run
  CLAUSES               run only these clauses, globs allowed: CLAUSES='AUTH-*,EV-1'
  RETRY_FAILED=N        rerun an unexpected failure up to N times; a pass on a rerun is "flaky" (0)
  EXPECTATIONS          JSON or YAML file of known failures: clause or test id -> reason (ticket link)
  REPORTS_DIR           where reports go (reports)
  GITHUB_STEP_SUMMARY   set by GitHub Actions: summary.md is appended to it
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY  forward proxy for the target (lower case too, read as curl does)
  NODE_EXTRA_CA_CERTS   PEM file of a private CA the target's certificate comes from
  FUZZ_RUNS             generated requests of the fuzz phase; 0 turns it off (200)
  FUZZ_SEED             seed of the fuzz phase (random, printed and in results.json)
  FUZZ_TIME_MS          time cap of the fuzz phase, shrinking included (60000)
  FUZZ_CONCURRENCY      generated requests in flight at once (4)
  FUZZ_MAX_BODY_BYTES   largest generated body (65536)
  FUZZ_REPLAY           <case>@<path> from a fuzz failure: send only that request

  --update-expectations remove known failures that now pass from the EXPECTATIONS file
  --list-tests          print every test's stable id and title (for EXPECTATIONS), run nothing
  -t <pattern>          vitest's test-name filter (a regex on "<describe> <title>")
  file filters          vitest's file filters: npm test -- auth events
Exit codes: 0 pass, 1 conformance failure or unexpected pass, 2 configuration error,
  3 the runner crashed (reports say what happened), 130/143 interrupted by SIGINT/SIGTERM (reports of what completed).`;

/** Exit codes beside 0 (pass), 1 (conformance failure) and 2 (configuration error). */
export const EXIT_CRASH = 3;
const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;

/** What the run knows so far, so that a crash or an interruption still reports what completed. */
const state: {
  startedAt: string; started: number; target?: string; mode?: RunMode; strict: boolean;
  collector?: VerdictCollector; reported: boolean; reportsDir?: string; githubStepSummary?: string;
} = { startedAt: new Date().toISOString(), started: performance.now(), strict: false, reported: false };

interface Args { help: boolean; listTests: boolean; updateExpectations: boolean; testNamePattern?: string; files: string[] }

function parseCli(argv: string[]): Args {
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

function configError(message: string): never {
  process.stderr.write(`chatgate: configuration error: ${redact(message)}\n`);
  process.exit(2);
}

async function main(): Promise<number> {
  let config: Config;
  let args: Args;
  let expectations: ExpectationsFile | undefined;
  try {
    args = parseCli(process.argv.slice(2));
    if (args.help) { console.log(HELP); return 0; }
    if (args.listTests) {
      // Collecting needs no target: TARGET_URL (and so API_KEY) is not asked for; the other knobs are checked.
      const knobs = loadConfig({ ...process.env, TARGET_URL: undefined });
      for (const t of (await collectTests(knobs)).sort((a, b) => a.id.localeCompare(b.id))) console.log(`${t.id}\t${t.title}`);
      return 0;
    }
    config = loadConfig(process.env);
    Object.assign(state, { target: config.targetUrl, reportsDir: config.reportsDir, githubStepSummary: config.githubStepSummary });
    checkNamePattern(args.testNamePattern);
    if (config.expectationsFile) expectations = loadExpectations(resolve(config.expectationsFile));
    if (args.updateExpectations && !expectations) throw new ConfigError('--update-expectations', 'needs EXPECTATIONS=<file> to update');
    // Test ids are known once vitest has collected the suite files (imports only, no request).
    if (expectations?.entries.some((e) => isTestId(e.id))) {
      const index = await collectTests(config);
      for (const w of checkTestIds(expectations, new Set(index.map((t) => t.id)), new Map(index.filter((t) => t.legacyId).map((t) => [t.legacyId!, t.id])))) process.stderr.write(`chatgate: warning: ${w}\n`);
    }
  } catch (err) {
    if (err instanceof ConfigError) configError(err.message);
    throw err;
  }
  // --- fuzz phase: one seed for every worker (the run context), always shown ---
  const fuzzSeed = config.fuzz.seed ?? Math.floor(Math.random() * FUZZ_MAX_SEED);
  const mode: RunMode = {
    fuzz: { runs: config.fuzz.runs, seed: fuzzSeed, timeMs: config.fuzz.timeMs, concurrency: config.fuzz.concurrency, maxBodyBytes: config.fuzz.maxBodyBytes, ...(config.fuzz.replay ? { replay: `${config.fuzz.replay.caseIndex}@${config.fuzz.replay.path}` } : {}) },
    strict: config.strict, clauses: config.clauses, testNamePattern: args.testNamePattern,
    files: args.files.length ? args.files : undefined, retryFailed: config.retryFailed,
    expectations: config.expectationsFile, updateExpectations: args.updateExpectations,
  };
  registerRunSecrets({ API_KEY: config.apiKey, LIMITED_API_KEY: config.limitedApiKey, RATE_LIMIT_API_KEY: config.rateLimitApiKey });
  for (const w of oneLineWarnings(config.extraHeaders)) process.stderr.write(`chatgate: warning: HEADERS: ${w}\n`);
  // Staging: one request before any test; no HTTP answer at all is exit 2, no report, no history.
  let preflightExchange: ExchangeSummary | undefined;
  if (config.targetUrl) {
    const pre = await preflight({ targetUrl: config.targetUrl, apiKey: config.apiKey!, timeoutMs: config.timeoutMs })
      .catch((err) => (err instanceof ConfigError ? configError(err.message) : Promise.reject(err)));
    for (const w of pre.warnings) process.stderr.write(`chatgate: warning: ${redact(w)}\n`);
    if (pre.unreachable) configError(`${pre.unreachable.variable}: ${pre.unreachable.message}`);
    // The preflight's answer is an exchange of the run: the per-response rules judge it too.
    if (pre.answer && pre.status !== undefined) {
      preflightExchange = redactDeep(summariseParts({
        source: 'preflight', method: 'GET', url: pre.answer.url, status: pre.status, headers: pre.answer.headers, text: pre.answer.text,
        curl: toCurl({ method: 'GET', url: pre.answer.url, headers: { Authorization: 'Bearer ***' } }),
      }, 'preflight'));
    }
  }

  const startedAt = new Date().toISOString();
  const started = performance.now();
  let targetLabel = config.targetUrl!;
  // What the workers are told about the target (the run context); keys only by the variable holding them.
  let target: TargetRef | undefined = config.targetUrl ? { url: config.targetUrl, keys: keyVariables(config) } : undefined;
  let brainId = config.brainId;
  Object.assign(state, { startedAt, started, target: targetLabel, mode, strict: config.strict });
  for (const signal of Object.keys(SIGNALS) as Array<keyof typeof SIGNALS>) process.once(signal, () => interrupted(signal));
  let stopReference: (() => Promise<void>) | undefined;
  if (!config.targetUrl) {
    // The embedded default: a reference server on 127.0.0.1 with its own keys and brain.
    const { startReferenceServer } = await import('../reference/server.ts');
    const { DEFECTS } = await import('../reference/defects.ts');
    const { VARIANTS } = await import('../reference/variants.ts');
    try {
      checkReferenceNames(config.reference, { defects: Object.keys(DEFECTS), variants: Object.keys(VARIANTS) });
    } catch (err) {
      if (err instanceof ConfigError) configError(err.message);
      throw err;
    }
    const options = { ...(config.reference.defect ? { defect: config.reference.defect } : {}), ...(config.reference.variants.length ? { variants: config.reference.variants } : {}) };
    const ref = await startReferenceServer(options);
    stopReference = () => ref.close();
    bypassProxyFor(new URL(ref.url).hostname); // our own loopback server: never through a proxy
    registerRunSecrets(ref.keys);
    // Its keys stay in this process's environment (the workers inherit it); the run context names them.
    Object.assign(process.env, {
      [EMBEDDED_KEY_VARIABLES.main]: ref.keys.main, [EMBEDDED_KEY_VARIABLES.limited]: ref.keys.limited,
      [EMBEDDED_KEY_VARIABLES.rateLimit]: ref.keys.rateLimit,
    });
    // Replay commands of the fuzz phase name the defect/variants, not this URL.
    target = { url: ref.url, keys: { ...EMBEDDED_KEY_VARIABLES }, embedded: { ...(options.defect ? { defect: options.defect } : {}), ...(options.variants?.length ? { variants: options.variants } : {}) } };
    brainId = ref.brainId;
    const extras = [options.defect && `defect ${options.defect}`, options.variants?.length && `variants ${options.variants.join(',')}`].filter(Boolean);
    targetLabel = `embedded reference server ${ref.url}${extras.length ? ` (${extras.join('; ')})` : ''}`;
    state.target = targetLabel;
  }

  // After every configuration check (one line of stderr for a configuration error, nothing else).
  if (config.fuzz.runs > 0) process.stderr.write(`chatgate: fuzz phase: FUZZ_RUNS=${config.fuzz.runs} FUZZ_SEED=${fuzzSeed}${config.fuzz.replay ? ` FUZZ_REPLAY=${config.fuzz.replay.caseIndex}@${config.fuzz.replay.path}` : ''}\n`);
  const runDir = mkdtempSync(join(tmpdir(), 'chatgate-run-'));
  process.env.CHATGATE_RUN_DIR = runDir;
  writeRunContext(runDir, runContextOf(config, {
    phase: 'run', target, brainId, fuzz: { ...config.fuzz, seed: fuzzSeed },
    mode: { strict: config.strict, clauses: mode.clauses, testNamePattern: mode.testNamePattern, files: mode.files },
  }));
  const tty = process.stderr.isTTY;
  const progress = tty ? (n: number) => process.stderr.write(`\rchatgate: ${n} tests done`) : undefined;
  const collector = state.collector = new VerdictCollector(ROOT, progress);
  // One pace for every worker: the run's governor (lib/run/governor.ts), asked over a socket in the run directory.
  const governor: GovernorServer = await startGovernorServer(runDir);
  try {
    await runSuites({ pattern: allOf(selectionPattern(config.clauses), args.testNamePattern), files: args.files, collector });
    // Self-test seam (docs/RUNNER.md): a crash of the runner itself, after the tests ran.
    if (config.selftest.crash) throw new Error('self-test: the runner crashes on purpose (CHATGATE_SELFTEST_CRASH=1)');
    if (tty) process.stderr.write('\n');
    // Known failures are not rerun: only what would fail the run unexpectedly. Nor are
    // harness errors: a pass on a rerun would hide them as "flaky".
    await retryFailures(collector.records, config.retryFailed, (t) => !isHarnessError(t) && failsTheRun(t, config.strict) && !isNamed(expectations, t));
  } finally {
    await governor.close();
    await stopReference?.();
  }

  const exchanges = [...(preflightExchange ? [preflightExchange] : []), ...readExchanges(runDir)];
  rmSync(runDir, { recursive: true, force: true });
  const nameFilter = args.testNamePattern === undefined ? undefined : new RegExp(args.testNamePattern);
  const runWide = foldIntoProbes(collector.records, runWideChecks(exchanges, target!.url)
    .filter((r) => selectionMatches(config.clauses, r.clause) && (!nameFilter || nameFilter.test(r.title))));
  const tests = [...collector.records, ...runWide].sort((a, b) => a.id.localeCompare(b.id));
  for (const e of collector.moduleErrors) {
    tests.push({ id: `load-error/${tests.length}`, clause: 'unknown', level: 'MUST', verdict: 'error', title: 'suite file failed to load', requirement: '', message: e, notes: [] });
  }
  // Run-wide clauses judge the responses of the tests that ran: without any, they judge nothing.
  if (collector.records.length === 0 && collector.moduleErrors.length === 0) {
    const selection = [config.clauses && `CLAUSES=${config.clauses}`, args.testNamePattern && `-t ${args.testNamePattern}`, args.files.length && `file filters ${args.files.join(' ')}`];
    process.stderr.write(`chatgate: no test matched ${selection.filter(Boolean).join(', ') || 'the selection'}\n`);
    return 2;
  }
  const known = expectations ? applyExpectations(expectations, tests) : undefined;
  if (known && args.updateExpectations && known.unexpectedPass.length) {
    removeEntries(expectations!, known.unexpectedPass);
    known.updated = true;
  }
  if (known) known.file = config.expectationsFile!;
  const failed = runFails(tests, { strict: config.strict, expectations: known });
  const results: Results = { ...resultsOf(tests, failed ? 1 : 0), ...(known ? { expectations: known } : {}) };
  state.reported = true;
  const paced = governor.stats();
  const throttledOutTests = tests.filter((t) => t.verdict === 'inconclusive' && t.message?.startsWith(THROTTLED)).length;
  if (paced.answered429 > 0 || paced.heldMs >= 1000 || throttledOutTests > 0) {
    results.throttle = {
      answered429: paced.answered429, heldMs: Math.round(paced.heldMs), waitedMs: Math.round(paced.waitedMs),
      lowestConcurrency: paced.lowestConcurrency, widestIntervalMs: paced.widestIntervalMs, throttledOutTests,
    };
  }
  const reportsDir = config.reportsDir;
  const previous = previousRun(reportsDir, results.target);
  if (previous) results.comparison = compareRuns(previous, results);
  const latest = join(reportsDir, 'latest');
  writeReports(latest, results);
  archiveRun(reportsDir, latest, startedAt);
  console.log(renderConsole(results, { color: process.stdout.isTTY }));
  if (known?.updated) console.log(`expectations: removed ${known.unexpectedPass.join(', ')} from ${known.file} (they pass now)`);
  console.log(`reports: ${latest}/index.html, summary.md, results.json, junit.xml`);
  return results.exitCode;
}

/** Every report of a run into `latest` (emptied first), the job summary too. */
function writeReports(latest: string, results: Results): void {
  rmSync(latest, { recursive: true, force: true });
  mkdirSync(latest, { recursive: true });
  writeResultsJson(latest, results);
  writeJunit(latest, results);
  writeHtml(latest, results);
  writeMarkdown(latest, results);
  writeStepSummary(latest);
}

/** The results of the run as far as it got. */
function resultsOf(tests: TestRecord[], exitCode: number): Results {
  return {
    resultsVersion: RESULTS_VERSION, target: redact(state.target ?? 'unknown target'), startedAt: state.startedAt,
    durationMs: Math.round(performance.now() - state.started), strict: state.strict,
    summary: summarise(tests), exitCode, tests,
    chatgate: {
      version: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version, node: process.version,
      maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    },
    ...(state.mode ? { mode: state.mode } : {}),
  };
}

/**
 * The reports of a run that did not finish (a crash, an interruption): the tests that
 * completed, marked incomplete, plus `extra` (the crash itself). Synchronous, so a
 * signal handler finishes it before the process exits. Not archived: an incomplete run
 * is no baseline for "since the previous run".
 */
function reportIncomplete(incomplete: NonNullable<Results['incomplete']>, exitCode: number, extra: TestRecord[] = []): void {
  if (state.reported) return;
  state.reported = true;
  const tests = [...(state.collector?.records ?? []), ...extra].sort((a, b) => a.id.localeCompare(b.id));
  const results: Results = { ...resultsOf(tests, exitCode), incomplete };
  const latest = join(state.reportsDir ?? join(ROOT, 'reports'), 'latest');
  try {
    writeReports(latest, results);
    console.log(renderConsole(results, { color: process.stdout.isTTY }));
    console.log(`reports (incomplete run): ${latest}/index.html, summary.md, results.json, junit.xml`);
  } catch (err) {
    process.stderr.write(`chatgate: could not write the reports of the incomplete run: ${redact((err as Error)?.message ?? String(err))}\n`);
  }
}

/** SIGINT/SIGTERM (a CI job cancelled): report what completed and exit 128 + the signal's number. */
function interrupted(signal: keyof typeof SIGNALS): void {
  const code = 128 + SIGNALS[signal];
  // vitest's own handler exits a moment later with process.exitCode: ours is set first.
  process.exitCode = code;
  const done = state.collector?.records.length ?? 0;
  process.stderr.write(`\nchatgate: interrupted by ${signal}: writing the reports of the ${done} test${done === 1 ? '' : 's'} that completed\n`);
  reportIncomplete({ reason: 'interrupted', detail: `interrupted by ${signal} after ${done} completed test${done === 1 ? '' : 's'}; tests still running or not started are not in this report, nor are the run-wide checks` }, code);
  process.exit(code);
}

/** GitHub Actions shows $GITHUB_STEP_SUMMARY on the run's page; other steps may have written to it already. */
function writeStepSummary(latest: string): void {
  const target = state.githubStepSummary;
  if (!target) return;
  try {
    appendFileSync(target, `${readFileSync(join(latest, 'summary.md'), 'utf8')}\n`);
  } catch (err) {
    process.stderr.write(`chatgate: could not write GITHUB_STEP_SUMMARY (${(err as Error).message}); the summary is in ${latest}/summary.md\n`);
  }
}

main().then((code) => process.exit(code), (err) => {
  // A crash of the runner itself (configuration errors never get here): exit 3, and the
  // reports say what happened, with the tests that completed before it.
  const message = redact((err as Error)?.stack ?? String(err));
  process.stderr.write(`chatgate: the runner crashed (a defect of chatgate, not a verdict on the target): ${message}\n`);
  reportIncomplete({ reason: 'crashed', detail: `the runner crashed: ${oneLineOf(message)}` }, EXIT_CRASH, [{
    id: 'runner/crash', clause: 'unknown', level: 'MUST', verdict: 'error', title: 'the runner crashed', requirement: '',
    message: `the runner crashed: ${message}`, notes: [],
  }]);
  process.exit(EXIT_CRASH);
});

function oneLineOf(text: string): string {
  return text.split('\n')[0]!.slice(0, 300);
}
