// A merged k6 run's details on its page: the thresholds judged on the whole test (beside
// each runner's own verdict), the checks and the runners merged, as tables; the
// console prints the same thresholds (merge.ts). Slices are drawn by k6-slices-html.ts.
import type { LoadSummary } from './summary.ts';
import { esc } from './slice-charts.ts';

/** A k6 threshold judged on the whole test (merge.ts makes them; defined here, where they are drawn, since merge.ts renders through this module). */
export interface ThresholdVerdict { metric: string; expression: string; ok: boolean; judged: boolean; observed?: string; runners_ok: boolean[] }

interface K6Details {
  script: string;
  result: string;
  thresholds: ThresholdVerdict[];
  checks: Array<{ name: string; passes: number; fails: number }>;
  merged_from?: Array<{ file: string; segment: string; runner: number; result: string; started_at?: string | null; finished_at?: string | null }>;
  bucket_scheme?: string;
  relative_error?: number;
}

const mark = (judged: boolean, ok: boolean) => (!judged ? '–' : ok ? '✓' : '✗');
const cls = (judged: boolean, ok: boolean) => (judged && !ok ? ' class="lvl-MUST"' : '');

function rows(head: string[], body: string[][]): string {
  return `<table><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${body.map((r) => `<tr>${r.join('')}</tr>`).join('')}</table>`;
}

/** The page's title for a merge of k6 runners: what was merged (script, runners, test id), not the scenario its figures are filed under. */
export function k6Title(s: LoadSummary): string | undefined {
  const d = (s.details as { k6?: K6Details }).k6;
  if (!d) return undefined;
  const n = d.merged_from?.length ?? 0;
  const test = (s.options as { test_id?: unknown }).test_id;
  // The test's start, as a single run's title gives its own: the earliest runner's, on its clock.
  return `chatgate k6: ${d.script}, ${n} runner${n === 1 ? '' : 's'} merged${typeof test === 'string' ? ` (test ${test})` : ''} — ${s.started_at ?? 'start not recorded'}`;
}

/** The section, or undefined when the summary is not a k6 merge. */
export function k6DetailsSection(s: LoadSummary): string | undefined {
  const d = (s.details as { k6?: K6Details }).k6;
  if (!d) return undefined;
  const thresholds = rows(['metric', 'threshold', 'whole test', 'observed', 'runners alone'], (d.thresholds ?? []).map((t) => [
    `<td><code>${esc(t.metric)}</code></td>`, `<td><code>${esc(t.expression)}</code></td>`, `<td${cls(t.judged, t.ok)}>${mark(t.judged, t.ok)}</td>`,
    `<td>${esc(t.observed ?? (t.judged ? '' : 'not judged'))}</td>`, `<td>${esc((t.runners_ok ?? []).map((ok) => mark(true, ok)).join(''))}</td>`,
  ]));
  const checks = rows(['check', 'passes', 'fails'], (d.checks ?? []).map((c) => [`<td>${esc(c.name)}</td>`, `<td>${c.passes}</td>`, `<td${c.fails ? ' class="lvl-MUST"' : ''}>${c.fails}</td>`]));
  const at = (t: string | null | undefined) => `<td class="nw">${esc(t ?? 'not recorded')}</td>`;
  const runners = rows(['runner', 'segment', 'started', 'finished', 'result alone', 'summary'], (d.merged_from ?? []).map((r) => [`<td>${r.runner}</td>`, `<td>${esc(r.segment)}</td>`, at(r.started_at), at(r.finished_at), `<td>${esc(r.result)}</td>`, `<td>${esc(r.file)}</td>`]));
  // The runners' own clocks: the test from the earliest start to the latest end; its rates over the longest runner's run.
  const span = `<p class="help">The test ran from ${esc(s.started_at ?? 'a start not recorded')} to ${esc(s.finished_at ?? 'an end not recorded')} (the earliest runner's start and the latest runner's end, each on its runner's clock${s.times_unknown ? `; ${esc(s.times_unknown)}` : ''}); its rates are over the longest runner's run, ${s.duration_s} s.</p>`;
  return `<h2>k6 thresholds and checks</h2>
<p class="help"><code>${esc(d.script)}</code>: ${esc(d.result.toUpperCase())} on the whole test; each threshold judged again on the merged figures (percentiles from the runners' log buckets${d.relative_error !== undefined ? `, within ${d.relative_error * 100} % of the true ones` : ''}); "runners alone" is each runner's own verdict, in segment order.</p>
${thresholds}
${checks}
<h3>Runners merged</h3>
${span}
${runners}`;
}
