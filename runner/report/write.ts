// The report phase of npm test: every report of a run into reports/latest, the job
// summary, the run history and the comparison with the previous run, the console;
// the report model (model.ts) is derived once and every writer renders it.
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Results } from '../../lib/run/verdicts.ts';
import { writeResultsJson } from './results-json.ts';
import { writeJunit } from './junit.ts';
import { writeMarkdown } from './markdown.ts';
import { writeHtml } from './html.ts';
import { renderConsole } from './console.ts';
import { archiveRun, compareRuns, previousRun } from './history.ts';
import { reportModel, type ReportModel } from './model.ts';

/** Every report of a run into `latest` (emptied first), the job summary too. */
export function writeReports(latest: string, model: ReportModel, githubStepSummary: string | undefined): void {
  rmSync(latest, { recursive: true, force: true });
  mkdirSync(latest, { recursive: true });
  writeResultsJson(latest, model.results);
  writeJunit(latest, model);
  writeHtml(latest, model);
  writeMarkdown(latest, model);
  writeStepSummary(latest, githubStepSummary);
}

/** A finished run: compared with the previous one against the same target, written, archived and shown. */
export function publishReports(results: Results, opts: { reportsDir: string; githubStepSummary?: string }): void {
  const previous = previousRun(opts.reportsDir, results.target);
  if (previous) results.comparison = compareRuns(previous, results);
  const latest = join(opts.reportsDir, 'latest');
  const model = reportModel(results);
  writeReports(latest, model, opts.githubStepSummary);
  archiveRun(opts.reportsDir, latest, results.startedAt);
  console.log(renderConsole(model, { color: process.stdout.isTTY }));
  if (results.expectations?.updated) console.log(`expectations: removed ${results.expectations.unexpectedPass.join(', ')} from ${results.expectations.file} (they pass now)`);
  console.log(`reports: ${latest}/index.html, summary.md, results.json, junit.xml`);
}

/** GitHub Actions shows $GITHUB_STEP_SUMMARY on the run's page; other steps may have written to it already. */
function writeStepSummary(latest: string, target: string | undefined): void {
  if (!target) return;
  try {
    appendFileSync(target, `${readFileSync(join(latest, 'summary.md'), 'utf8')}\n`);
  } catch (err) {
    process.stderr.write(`chatgate: could not write GITHUB_STEP_SUMMARY (${(err as Error).message}); the summary is in ${latest}/summary.md\n`);
  }
}
