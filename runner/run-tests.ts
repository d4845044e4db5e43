// The run-the-suites phase of npm test: the run directory and its context, the run's
// governor, one vitest run of suites/, the reruns of RETRY_FAILED; then the exchanges
// the workers logged, for the run-wide checks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runContextOf, writeRunContext } from '../lib/run/run-context.ts';
import { failsTheRun, isHarnessError } from '../lib/run/verdicts.ts';
import { allOf, selectionPattern } from '../lib/run/selection.ts';
import { isNamed } from '../lib/run/expectations.ts';
import type { GovernorStats } from '../lib/run/governor.ts';
import type { TargetDown } from '../lib/run/target-down.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';
import { VerdictCollector } from './verdict-collector.ts';
import { startGovernorServer } from './governor-server.ts';
import { readExchanges, retryFailures, runSuites } from './vitest-run.ts';
import { state } from './run-state.ts';
import type { Plan } from './configure.ts';
import type { Target } from './start-target.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface SuiteRun {
  collector: VerdictCollector;
  /** Every exchange of the run in time order: the preflight's, then the workers'. */
  exchanges: ExchangeSummary[];
  /** What the governor paced. */
  paced: GovernorStats;
  /** The target stopped answering mid-run (set by the judging phase). */
  targetDown?: TargetDown;
}

export async function runTests(plan: Plan, target: Target): Promise<SuiteRun> {
  const { config, args, fuzzSeed, mode } = plan;
  // After every configuration check (one line of stderr for a configuration error, nothing else).
  if (config.fuzz.runs > 0) process.stderr.write(`chatgate: fuzz phase: FUZZ_RUNS=${config.fuzz.runs} FUZZ_SEED=${fuzzSeed}${config.fuzz.replay ? ` FUZZ_REPLAY=${config.fuzz.replay.caseIndex}@${config.fuzz.replay.path}` : ''}\n`);
  const runDir = mkdtempSync(join(tmpdir(), 'chatgate-run-'));
  process.env.CHATGATE_RUN_DIR = runDir;
  writeRunContext(runDir, runContextOf(config, {
    phase: 'run', target: target.ref, brainId: target.brainId, fuzz: { ...config.fuzz, seed: fuzzSeed },
    mode: { strict: config.strict, clauses: mode.clauses, testNamePattern: mode.testNamePattern, files: mode.files },
  }));
  const tty = process.stderr.isTTY;
  // The seam's lines tell a self-test the runner holds a verdict (a worker's report of it is batched).
  const progress = config.selftest.progress ? (n: number) => process.stderr.write(`chatgate: ${n} tests done\n`)
    : tty ? (n: number) => process.stderr.write(`\rchatgate: ${n} tests done`) : undefined;
  const collector = state.collector = new VerdictCollector(ROOT, progress);
  // One pace for every worker: the run's governor (lib/run/governor.ts), asked over a socket in the run directory.
  const governor = await startGovernorServer(runDir);
  try {
    await runSuites({ pattern: allOf(selectionPattern(config.clauses), args.testNamePattern), files: args.files, collector });
    // Self-test seam (docs/RUNNER.md): a crash of the runner itself, after the tests ran.
    if (config.selftest.crash) throw new Error('self-test: the runner crashes on purpose (CHATGATE_SELFTEST_CRASH=1)');
    if (tty) process.stderr.write('\n');
    // Known failures are not rerun: only what would fail the run unexpectedly. Nor are
    // harness errors: a pass on a rerun would hide them as "flaky".
    await retryFailures(collector.records, config.retryFailed, (t) => !isHarnessError(t) && failsTheRun(t, config.strict) && !isNamed(plan.expectations, t));
  } finally {
    await governor.close();
    await target.stop();
  }
  const exchanges = [...(plan.preflightExchange ? [plan.preflightExchange] : []), ...readExchanges(runDir)];
  rmSync(runDir, { recursive: true, force: true });
  return { collector, exchanges, paced: governor.stats() };
}
