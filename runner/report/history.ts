// Keeps the previous runs: reports/latest/ is copied to reports/runs/<timestamp>/
// and only the newest KEEP runs are kept. Also compares a run with the previous one
// against the same target, so a report can say what changed since.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { countsAsFailing, countsAsPassing, type Results, type RunComparison } from '../../lib/run/verdicts.ts';

export const KEEP_RUNS = 20;

export function archiveRun(reportsDir: string, latestDir: string, startedAt: string, keep = KEEP_RUNS): string {
  const runs = join(reportsDir, 'runs');
  mkdirSync(runs, { recursive: true });
  const dest = join(runs, startedAt.replace(/[:.]/g, '-'));
  cpSync(latestDir, dest, { recursive: true });
  const all = readdirSync(runs).sort();
  for (const old of all.slice(0, Math.max(0, all.length - keep))) rmSync(join(runs, old), { recursive: true, force: true });
  return dest;
}

/** The embedded reference binds a random port each run: its runs are one target (per defect and variants). */
export function targetKey(target: string): string {
  return target.replace(/^(embedded reference server) http:\/\/127\.0\.0\.1:\d+\/v1/, '$1');
}

/** The newest archived run against the same target, if any. */
export function previousRun(reportsDir: string, target: string): Results | undefined {
  const runs = join(reportsDir, 'runs');
  if (!existsSync(runs)) return undefined;
  for (const dir of readdirSync(runs).sort().reverse()) {
    const file = join(runs, dir, 'results.json');
    if (!existsSync(file)) continue;
    try {
      const r = JSON.parse(readFileSync(file, 'utf8')) as Results;
      if (targetKey(r.target) === targetKey(target)) return r;
    } catch { /* a run cut short: look further back */ }
  }
  return undefined;
}

/** Tests present in both runs that moved between passing and failing (lib/run/verdicts.ts: an `error` counts as failing; skip and inconclusive move nothing). */
export function compareRuns(previous: Results, current: Results): RunComparison {
  const before = new Map(previous.tests.map((t) => [t.id, t]));
  // A run written before stable ids (resultsVersion 1) named tests by title.
  const byTitle = previous.resultsVersion === undefined ? new Map(previous.tests.map((t) => [t.title, t])) : undefined;
  const newlyFailing: RunComparison['newlyFailing'] = [];
  const newlyPassing: RunComparison['newlyPassing'] = [];
  for (const t of current.tests) {
    const p = before.get(t.id) ?? byTitle?.get(t.title);
    if (!p) continue;
    if (countsAsFailing(t) && countsAsPassing(p)) newlyFailing.push({ id: t.id, clause: t.clause });
    if (countsAsPassing(t) && countsAsFailing(p)) newlyPassing.push({ id: t.id, clause: t.clause });
  }
  return { previousStartedAt: previous.startedAt, newlyFailing, newlyPassing };
}

/** "since the previous run against this target: newly failing AUTH-1 (2 tests), newly passing none". */
export function comparisonLine(c: RunComparison | undefined): string {
  if (!c) return 'since the previous run against this target: no previous run kept';
  const list = (xs: RunComparison['newlyFailing']) => {
    if (xs.length === 0) return 'none';
    const byClause = new Map<string, number>();
    for (const x of xs) byClause.set(x.clause, (byClause.get(x.clause) ?? 0) + 1);
    return [...byClause].map(([clause, n]) => (n > 1 ? `${clause} (${n} tests)` : clause)).join(', ');
  };
  return `since the previous run against this target (${c.previousStartedAt}): newly failing ${list(c.newlyFailing)}, newly passing ${list(c.newlyPassing)}`;
}
