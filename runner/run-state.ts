// What the run knows so far, so that a crash or an interruption still reports what
// completed: the reports of an unfinished run (marked incomplete, never archived), the
// SIGINT/SIGTERM handler, and the runner's crash (exit 3).
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { redact } from '../lib/run/redact.ts';
import { RESULTS_VERSION, summarise, type Results, type RunMode, type TestRecord } from '../lib/run/verdicts.ts';
import type { VerdictCollector } from './verdict-collector.ts';
import { renderConsole } from './report/console.ts';
import { writeReports } from './report/write.ts';
import { reportModel } from './report/model.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Exit codes beside 0 (pass), 1 (conformance failure) and 2 (configuration error). */
export const EXIT_CRASH = 3;
const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;

export const state: {
  startedAt: string; started: number; target?: string; mode?: RunMode; strict: boolean;
  collector?: VerdictCollector; reported: boolean; reportsDir?: string; githubStepSummary?: string;
} = { startedAt: new Date().toISOString(), started: performance.now(), strict: false, reported: false };

/** The results of the run as far as it got. */
export function resultsOf(tests: TestRecord[], exitCode: number): Results {
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
    const model = reportModel(results);
    writeReports(latest, model, state.githubStepSummary);
    console.log(renderConsole(model, { color: process.stdout.isTTY }));
    console.log(`reports (incomplete run): ${latest}/index.html, summary.md, results.json, junit.xml`);
  } catch (err) {
    process.stderr.write(`chatgate: could not write the reports of the incomplete run: ${redact((err as Error)?.message ?? String(err))}\n`);
  }
}

/** From here on SIGINT/SIGTERM (a CI job cancelled) report what completed and exit 128 + the signal's number. */
export function reportOnInterrupt(): void {
  for (const signal of Object.keys(SIGNALS) as Array<keyof typeof SIGNALS>) process.once(signal, () => interrupted(signal));
}

function interrupted(signal: keyof typeof SIGNALS): void {
  const code = 128 + SIGNALS[signal];
  // vitest's own handler exits a moment later with process.exitCode: ours is set first.
  process.exitCode = code;
  const done = state.collector?.records.length ?? 0;
  process.stderr.write(`\nchatgate: interrupted by ${signal}: writing the reports of the ${done} test${done === 1 ? '' : 's'} that completed\n`);
  reportIncomplete({ reason: 'interrupted', detail: `interrupted by ${signal} after ${done} completed test${done === 1 ? '' : 's'}; tests still running or not started are not in this report, nor are the run-wide checks` }, code);
  process.exit(code);
}

/**
 * A crash of the runner itself (configuration errors never get here): exit 3, and the
 * reports say what happened, with the tests that completed before it.
 */
export function crashed(err: unknown): never {
  const message = redact((err as Error)?.stack ?? String(err));
  process.stderr.write(`chatgate: the runner crashed (a defect of chatgate, not a verdict on the target): ${message}\n`);
  reportIncomplete({ reason: 'crashed', detail: `the runner crashed: ${oneLineOf(message)}` }, EXIT_CRASH, [{
    id: 'runner/crash', clause: 'unknown', level: 'MUST', verdict: 'error', title: 'the runner crashed', requirement: '',
    message: `the runner crashed: ${message}`, notes: [],
  }]);
  process.exit(EXIT_CRASH);
}

function oneLineOf(text: string): string {
  return text.split('\n')[0]!.slice(0, 300);
}
