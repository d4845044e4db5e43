// npm test: the conformance run, phase by phase (runner/). Exit codes: 0 no failure; 1
// an unexpected MUST/COMPAT failure or unexpected pass (SHOULD and flaky too in strict
// mode), or a harness error; 2 a configuration error, before any request (or a selection
// with no test); 3 the runner itself crashed (the reports say what happened); 130/143
// interrupted by SIGINT/SIGTERM (the reports of the tests that completed, marked
// incomplete). The runner contract: docs/RUNNER.md; the settings: docs/CONFIGURATION.md.
import { helpText } from '../lib/run/settings.ts';
import { configure, listTests, orConfigError, parseCli } from '../runner/configure.ts';
import { startTarget } from '../runner/start-target.ts';
import { runTests } from '../runner/run-tests.ts';
import { judge, noTestSelected, withRunWideChecks } from '../runner/judge.ts';
import { publishReports } from '../runner/report/write.ts';
import { crashed, reportOnInterrupt, state } from '../runner/run-state.ts';

async function main(): Promise<number> {
  const args = await orConfigError(() => parseCli(process.argv.slice(2)));
  if (args.help) { console.log(helpText()); return 0; }
  if (args.listTests) { await orConfigError(() => listTests(process.env)); return 0; }
  // Configure: the settings, the expectations, the secrets, the preflight (exit 2 on a bad one).
  const plan = await configure(args, process.env);
  Object.assign(state, { startedAt: new Date().toISOString(), started: performance.now(), mode: plan.mode, strict: plan.config.strict });
  reportOnInterrupt();
  const target = await startTarget(plan);
  state.target = target.label;
  const run = await runTests(plan, target); // the suites under vitest, then the reruns
  const tests = withRunWideChecks(plan, target, run);
  if (!tests) return noTestSelected(plan);
  const results = judge(plan, tests, run); // expectations and the exit code
  state.reported = true;
  publishReports(results, { reportsDir: plan.config.reportsDir, githubStepSummary: plan.config.githubStepSummary });
  return results.exitCode;
}

main().then((code) => process.exit(code), crashed);
