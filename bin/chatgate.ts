// npm test: the conformance run. Validates the configuration (exit 2 before any
// request if it is wrong), starts the embedded reference server when TARGET_URL is
// unset, runs suites/ under vitest, adds the run-wide checks, writes the reports
// and exits 0 (no failure), 1 (a MUST/COMPAT failure, or SHOULD in strict mode)
// or 2 (configuration error). The runner contract: docs/RUNNER.md.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from '../lib/config.ts';
import { addSecret, redact } from '../lib/redact.ts';
import { failsRun } from '../lib/clauses.ts';
import { summarise, type Results } from '../lib/verdicts.ts';
import { selectionPattern, selectionMatches } from '../lib/selection.ts';
import { VerdictCollector } from '../harness/verdict-collector.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';
import { runWideChecks } from '../suites/run-wide-checks.ts';
import { writeResultsJson } from '../reports/writers/results-json.ts';
import { writeJunit } from '../reports/writers/junit.ts';
import { renderConsole } from '../reports/writers/console.ts';
import { archiveRun } from '../reports/writers/history.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HELP = `Usage: npm test            (conformance run; configuration from the environment)

  TARGET_URL            base URL ending in /v1 (unset: embedded reference server)
  API_KEY               key holding brains:invoke (required with TARGET_URL)
  LIMITED_API_KEY       valid key lacking brains:invoke (AUTH-6/7)
  BRAIN_ID              uuid of a brain API_KEY may invoke
  RATE_LIMIT_API_KEY    key the rate-limit probe may exhaust (default API_KEY)
  RATE_LIMIT_PROBE_MAX  most requests the probe sends; 0 disables it (300)
  MODELS                comma list of model ids (svc-auto,svc)
  TIMEOUT_MS            limit for one request including its body or stream (30000)
  STRICT=1              SHOULD warnings fail the run
  CLAUSES               run only these clauses, globs allowed: CLAUSES='AUTH-*,EV-1'
  REPORTS_DIR           where reports go (reports)
Exit codes: 0 pass, 1 conformance failure, 2 configuration error.`;

function configError(message: string): never {
  process.stderr.write(`chatgate: configuration error: ${redact(message)}\n`);
  process.exit(2);
}

async function main(): Promise<number> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) { console.log(HELP); return 0; }
  let config: Config;
  try {
    config = loadConfig(process.env);
    selectionPattern(process.env.CLAUSES);
  } catch (err) {
    if (err instanceof ConfigError) configError(err.message);
    throw err;
  }
  addSecret(config.apiKey, 'API_KEY');
  addSecret(config.limitedApiKey, 'LIMITED_API_KEY');
  addSecret(config.rateLimitApiKey, 'RATE_LIMIT_API_KEY');

  const startedAt = new Date().toISOString();
  const started = performance.now();
  let targetLabel = config.targetUrl!;
  let stopReference: (() => Promise<void>) | undefined;
  if (!config.targetUrl) {
    // The embedded default: a reference server on 127.0.0.1 with its own keys and brain.
    const { startReferenceServer, referenceOptionsFromEnv } = await import('../reference/server.ts');
    const { DEFECTS } = await import('../reference/defects.ts');
    const { VARIANTS } = await import('../reference/variants.ts');
    const options = referenceOptionsFromEnv(process.env);
    if (options.defect && !(options.defect in DEFECTS)) {
      configError(`REFERENCE_DEFECT: "${options.defect}" is not a defect of the reference server; npm run reference -- --list shows them`);
    }
    for (const v of options.variants ?? []) {
      if (!(v in VARIANTS)) configError(`REFERENCE_VARIANTS: "${v}" is not a variant of the reference server; npm run reference -- --list shows them`);
    }
    const ref = await startReferenceServer(options);
    stopReference = () => ref.close();
    for (const [k, v] of Object.entries(ref.keys)) addSecret(v, k);
    Object.assign(process.env, {
      TARGET_URL: ref.url, API_KEY: ref.keys.main, LIMITED_API_KEY: ref.keys.limited,
      RATE_LIMIT_API_KEY: ref.keys.rateLimit, BRAIN_ID: ref.brainId,
    });
    const extras = [options.defect && `defect ${options.defect}`, options.variants?.length && `variants ${options.variants.join(',')}`].filter(Boolean);
    targetLabel = `embedded reference server ${ref.url}${extras.length ? ` (${extras.join('; ')})` : ''}`;
  }

  const runDir = mkdtempSync(join(tmpdir(), 'chatgate-run-'));
  process.env.CHATGATE_RUN_DIR = runDir;
  const tty = process.stderr.isTTY;
  const collector = new VerdictCollector(ROOT, tty ? (n) => process.stderr.write(`\rchatgate: ${n} tests done`) : undefined);
  try {
    const { startVitest } = await import('vitest/node');
    const vitest = await startVitest('test', [], {
      root: ROOT,
      config: join(ROOT, 'suites/vitest.config.ts'),
      watch: false,
      reporters: [collector],
      testNamePattern: selectionPattern(process.env.CLAUSES),
    });
    await vitest?.close();
  } finally {
    if (tty) process.stderr.write('\n');
    await stopReference?.();
  }

  const exchanges = readExchanges(runDir);
  rmSync(runDir, { recursive: true, force: true });
  const runWide = runWideChecks(exchanges).filter((r) => selectionMatches(process.env.CLAUSES, r.clause));
  const tests = [...collector.records, ...runWide].sort((a, b) => a.id.localeCompare(b.id));
  for (const e of collector.moduleErrors) {
    tests.push({ id: `load-error/${tests.length}`, clause: 'unknown', level: 'MUST', verdict: 'fail', title: 'suite file failed to load', requirement: '', message: e, notes: [] });
  }
  const summary = summarise(tests);
  const failed = tests.some((t) => t.verdict === 'fail' || (t.verdict === 'warn' && failsRun('SHOULD', config.strict)));
  const results: Results = {
    target: redact(targetLabel), startedAt, durationMs: Math.round(performance.now() - started), strict: config.strict,
    summary, exitCode: failed ? 1 : 0, tests,
    chatgate: {
      version: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version, node: process.version,
      maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    },
  };
  if (tests.length === 0) {
    process.stderr.write(`chatgate: no test matched CLAUSES=${process.env.CLAUSES ?? ''}\n`);
    return 2;
  }
  const reportsDir = resolve(process.env.REPORTS_DIR || join(ROOT, 'reports'));
  const latest = join(reportsDir, 'latest');
  rmSync(latest, { recursive: true, force: true });
  mkdirSync(latest, { recursive: true });
  writeResultsJson(latest, results);
  writeJunit(latest, results);
  archiveRun(reportsDir, latest, startedAt);
  console.log(renderConsole(results, { color: process.stdout.isTTY }));
  console.log(`reports: ${latest}/results.json, junit.xml`);
  return results.exitCode;
}

function readExchanges(dir: string): ExchangeSummary[] {
  const out: ExchangeSummary[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) out.push(JSON.parse(line));
  }
  return out;
}

main().then((code) => process.exit(code), (err) => {
  process.stderr.write(`chatgate: could not complete the run: ${redact((err as Error)?.stack ?? String(err))}\n`);
  process.exit(2);
});
