// report.html: one self-contained file (open it offline, attach it to a ticket) with
// the run's figures as tables and its distributions and time series as uPlot charts.
// uPlot (small, fast, no dependencies) is inlined from node_modules; the data is the
// summary itself, embedded as JSON. Everything is redacted before it is written.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { redact, redactDeep } from '../../lib/run/redact.ts';
import type { LoadSummary } from './summary.ts';
import { METRICS, isMetricName } from './metric-names.ts';
import { baselineOverlayHtml, sweepChartHtml, verdictHtml } from './verdict-html.ts';
// The page's timeline runs the registry's own status rule (its source, inlined).
import { isServerError } from '../../lib/spec/rules/status.ts';
import { rehearsalSection } from './rehearsal-html.ts';
import { k6SlicesSection } from './k6-slices-html.ts';
import { k6DetailsSection, k6Title } from './k6-details-html.ts';
import { SLO_COLOR } from './colours.ts';

const require = createRequire(import.meta.url);
const UPLOT_DIR = join(dirname(require.resolve('uplot/package.json')), 'dist');

export function writeHtmlReport(dir: string, summary: LoadSummary): string {
  const path = join(dir, 'report.html');
  writeFileSync(path, renderHtml(summary));
  return path;
}

/**
 * A section another report module adds to the page: an optional banner beside the
 * verdict, HTML placed after the run's charts, and chart code run after the built-in
 * charts with `R` in scope (R.plot, R.div, R.D: the embedded data; R.SLO_COLOR).
 */
export interface ReportSection { banner?: string; html?: string; script?: string }

/** Report modules that add sections: one entry each, `(summary) => ReportSection | undefined`. */
const EXTRA_SECTIONS: Array<(s: LoadSummary) => ReportSection | undefined> = [
  // A rehearsal's verdict and slices come right after the run's own charts.
  (s) => { const html = rehearsalSection(s); return html ? { html } : undefined; },
  // A merged k6 run's slices (SLICE and the runners' --out json).
  (s) => { const html = k6SlicesSection(s); return html ? { html } : undefined; },
];

/** Whether the page has per-second charts to draw (a merged k6 run has none). */
function overTheRun(s: LoadSummary): boolean {
  const r = (s.plots?.extra as { requests?: { points?: unknown[] } } | undefined)?.requests;
  return (s.timeline?.length ?? 0) > 0 || (r?.points?.length ?? 0) > 0;
}

export function renderHtml(input: LoadSummary): string {
  const s = redactDeep(input);
  const uplotJs = readFileSync(join(UPLOT_DIR, 'uPlot.iife.min.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
  const uplotCss = readFileSync(join(UPLOT_DIR, 'uPlot.min.css'), 'utf8');
  const slo = sloLines(s);
  const data = JSON.stringify({ scenario: s.scenario, plots: s.plots, timeline: s.timeline, details: s.details, slo })
    .replace(/</g, '\\u003c');
  const extra = EXTRA_SECTIONS.map((f) => f(s)).filter((x): x is ReportSection => x !== undefined);
  // Titled by what ran: a merge of k6 runners by its script, a merge of runs by their count.
  const merged = (s.details as { merged_from?: unknown[] }).merged_from?.length;
  const title = k6Title(s) ?? `chatgate load: ${s.scenario}${merged ? `, ${merged} runs merged` : ''} — ${s.started_at}`;
  const pooled = s.scenario === 'sweep' ? '<p class="help">Pooled over every step of the sweep (the answer and each step\'s own figures are in the sweep table above).</p>' : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${uplotCss}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:20px auto;max-width:1240px;padding:0 16px;color:#1d232a}
h1{font-size:21px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px;max-width:100%}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}td.txt{overflow-wrap:anywhere;text-align:left}td.nw{white-space:nowrap}
th{background:#f4f6f8;font-weight:600}td:first-child,th:first-child{text-align:left}.wide{width:100%}.wide th{font-size:12px}.wide td,.wide th{padding:3px 4px}
.muted{color:#667}.banner{padding:8px 12px;border-radius:4px;margin:10px 0}
.partial{background:#fff3cd;border:1px solid #e0c060}.fail{background:#fde2e1;border:1px solid #e09a96}.ok{background:#e3f4e5;border:1px solid #98c9a0}
.lvl-MUST,.lvl-COMPAT{color:#b3261e;font-weight:600}.lvl-SHOULD{color:#8a5a00}code{background:#f4f6f8;padding:0 3px;overflow-wrap:anywhere}
.help{font-size:13px;color:#445;max-width:980px}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}.card{border:1px solid #dde2e8;border-radius:6px;padding:6px 12px;min-width:120px;background:#fafbfc}
.findings code{display:block;margin:6px 0 2px;padding:3px 6px;white-space:pre-wrap;font-size:12px}
.card b{display:block;font-size:19px}.card span{font-size:12px;color:#556}.card span.card-bad{display:block;color:#b3261e;max-width:220px}
.chart{margin:6px 0 14px;min-height:40px}.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:0 24px}
.slo-note{color:${SLO_COLOR};font-weight:600;font-size:12px;text-align:right;margin-bottom:-4px}
.cols{display:flex;flex-wrap:wrap;gap:0 24px;align-items:flex-start}</style></head><body>
<h1>${esc(title)}</h1>
<div class="muted">target ${esc(s.target.url)} (${esc(s.target.kind)}) · ${s.duration_s} s · stop reason: ${esc(s.stop_reason)}${s.workload ? ` · workload: ${esc(String(s.workload.source))}` : ''}</div>
${s.partial ? '<div class="banner partial"><b>Partial run</b>: stopped before it finished (Ctrl-C); the figures cover what ran.</div>' : ''}
${verdictBanner(s)}
${verdictHtml(s)}
${extra.map((x) => x.banner ?? '').join('\n')}
${s.driver?.warning ? `<div class="banner partial"><b>Driver warning</b>: ${esc(s.driver.warning)}</div>` : ''}
${glance(s)}
${s.scenario === 'sweep' ? sweepAnswer(s) : ''}
<h2>Over the run</h2>
${overTheRun(s) ? '' : `<p class="help" id="no-run-charts">No per-second figures in this summary${(s.details as { k6?: unknown }).k6 ? ': k6 runners\' summaries hold the whole test\'s totals; its course in time is in the per-slice charts below, when the runners ran with <code>SLICE</code> and their <code>--out json</code> outputs were merged' : ''}.</p>`}
${!overTheRun(s) ? '' : `<p class="help">Each request at the second it was due to be sent${slo.length ? `; SLOs in <b style="color:${SLO_COLOR}">this colour</b> with their limits` : ''}${s.scenario === 'sweep' ? '; dashed verticals: where each step began' : ''}. Drag across a chart to zoom, double-click to reset.</p>`}
<div id="run-charts"></div>
<div id="extra-sections">
${extra.map((x) => x.html ?? '').join('\n')}
</div>
<h2>Latency distributions</h2>
${pooled}
<p class="help">Percentile curves: the latency (y) a given share of requests stayed under (x, log scale towards the tail); each curve stops where its samples stop (p99 needs 100 requests, p99.9 1,000). Histograms span the data's own range, in log bins where it spans more than a factor of 20. TTFT runs from each request's intended send time to its first output chunk (no coordinated omission)${s.latencies.ttfa_ms ? '; time to first answer token to its first content chunk (reasoning chunks came first)' : ''}; ITL is the gap between output chunks; E2E runs to the end of the stream.</p>
${latencyTable(s)}
<div class="grid" id="percentile-charts"></div>
<div class="grid" id="bucket-charts"></div>
<h2>Key metrics</h2>
${s.scenario === 'sweep' ? '<p class="help">Pooled over every step of the sweep, except <code>max_rate_meeting_slo_rps</code> and <code>goodput_rps</code>: the answer and the goodput at its step.</p>' : ''}
${metricsTable(s)}
${s.baseline ? `<h2>Baseline comparison</h2>${baselineTable(s)}${baselineOverlayHtml(s)}` : ''}
<h2 id="findings">Findings</h2>
${findingsTable(s)}
<h2>Requests</h2>
${countsTable(s)}
${scenarioSection(s)}
<h2>The driver</h2>
${!s.driver ? `<p class="help" id="driver-not-measured">Not measured${s.driver_not_measured ? `: ${esc(s.driver_not_measured)}` : ''}.</p>` : `${kvTable(s.driver as unknown as Record<string, unknown>)}
<p class="help">CPU in cores (1 = one core busy throughout). High event-loop utilisation or delay means the load generator, not the target, may have set the figures.</p>`}
<h2>Options</h2>
<p class="help">What this run used (defaults included)${s.target.kind === 'embedded-reference' ? '; the embedded reference server\'s settings of the timing model that ran' : ''}.</p>
${kvTable(optionsThatRan(s))}
<script>${uplotJs}</script>
<script type="application/json" id="data">${data}</script>
<script>var isServerError = ${isServerError.toString()};
${CHART_CODE}</script>
${extra.filter((x) => x.script).map((x) => `<script>(function (R) {\n${x.script}\n})(window.chatgateReport);</script>`).join('\n')}
</body></html>
`;
}


/** The latency SLOs of the run, for the charts: which series each limits, its value and label. */
function sloLines(s: LoadSummary): Array<{ metric: string; value: number; label: string }> {
  const d = s.details as { slo?: Record<string, number | null> };
  const o = s.options as Record<string, unknown>;
  const pick = (k: string): number | undefined => {
    const v = d.slo?.[k] ?? o[`slo_${k}`];
    return typeof v === 'number' ? v : undefined;
  };
  const out: Array<{ metric: string; value: number; label: string }> = [];
  const ttft = pick('ttft_p95_ms');
  if (ttft !== undefined && (s.scenario === 'stream' || s.scenario === 'sweep')) out.push({ metric: 'ttft', value: ttft, label: `SLO p95 TTFT ≤ ${ttft} ms` });
  const e2e = pick('e2e_p95_ms');
  if (e2e !== undefined) out.push({ metric: 'e2e', value: e2e, label: `SLO p95 E2E ≤ ${e2e} ms` });
  const itl = pick('itl_p95_ms');
  if (itl !== undefined) out.push({ metric: 'itl', value: itl, label: `SLO p95 ITL ≤ ${itl} ms` });
  return out;
}

/** A reply that was another request's is ok by status and body (the recorder's count): its SVC-9 count, said wherever ok is shown. */
function crossedNote(s: LoadSummary): string | undefined {
  const crossed = s.findings.filter((f) => f.clause === 'SVC-9').reduce((n, f) => n + f.count, 0);
  return crossed > 0 ? `of the ok, ${crossed} ${crossed === 1 ? 'was' : 'were'} another request's reply (SVC-9)` : undefined;
}

/** The headline figures, read before any table. */
function glance(s: LoadSummary): string {
  const m = s.metrics as Record<string, number | null | undefined>;
  const l = s.latencies;
  const cards: Array<[string, string, string?]> = [];
  const ms = (v: number | undefined | null) => (v === undefined || v === null ? '–' : `${fmt(v)} ms`);
  cards.push([`${s.counts.ok} / ${s.counts.sent}`, 'ok / sent', crossedNote(s)]);
  if (m.ok_rps != null) cards.push([fmt(m.ok_rps), s.scenario === 'sweep' ? 'ok/s, pooled over the steps' : 'ok/s over the run']);
  if (m.error_share != null) cards.push([`${fmt(m.error_share * 100)} %`, 'errors']);
  if (l.ttft_ms?.count) cards.push([`${ms(l.ttft_ms.p50_ms)} · ${ms(l.ttft_ms.p95_ms)}`, 'TTFT p50 · p95']);
  if (l.ttfa_ms?.count) cards.push([ms(l.ttfa_ms.p95_ms), 'first answer token p95']);
  if (l.itl_ms?.count) cards.push([ms(l.itl_ms.p95_ms), 'ITL p95']);
  if (l.e2e_ms?.count) cards.push([ms(l.e2e_ms.p95_ms), 'E2E p95']);
  if (l.latency_ms?.count) cards.push([`${ms(l.latency_ms.p50_ms)} · ${ms(l.latency_ms.p95_ms)}`, 'latency p50 · p95']);
  if (m.output_tokens_per_s != null) cards.push([fmt(m.output_tokens_per_s), 'output tokens/s']);
  const cache = (s.tokens as { cache?: { cache_hit_share: number | null } } | null | undefined)?.cache;
  if (cache && cache.cache_hit_share !== null) cards.push([`${fmt(cache.cache_hit_share * 100)} %`, 'prompt tokens from cache']);
  return `<div class="cards">${cards.map(([v, k, bad]) => `<div class="card"><b>${esc(v)}</b><span>${esc(k)}</span>${bad ? `<span class="lvl-MUST card-bad">${esc(bad)}</span>` : ''}</div>`).join('')}</div>`;
}

function sweepAnswer(s: LoadSummary): string {
  const d = s.details as Record<string, unknown>;
  // The answer and its offered/sent/completed chart come from verdict-html.ts (the console's derivation).
  return `<h2>Sweep answer</h2>${sweepChartHtml(s)}${d.note ? `<p class="help">${esc(String(d.note))}</p>` : ''}
<div class="grid" id="sweep-charts"></div>`;
}

/** Options as they ran: no default prompt when the workload said what to send, only the reference timing model that ran. */
function optionsThatRan(s: LoadSummary): Record<string, unknown> {
  const o = { ...s.options } as Record<string, unknown>;
  const source = s.workload?.source;
  if (source !== undefined && source !== 'fixed prompt') delete o.prompt;
  if (s.target.kind === 'embedded-reference') {
    const engine = o.ref_engine === true;
    for (const k of engine ? ['ref_ttft_ms', 'ref_itl_ms', 'ref_json_ms', 'ref_reply_words'] : ['ref_max_batch', 'ref_prefill_tps', 'ref_decode_step_ms', 'ref_decode_step_per_seq_ms']) delete o[k];
  }
  if (o.dataset === undefined) { delete o.dataset_format; delete o.multi_turn; }
  if (o.arrival !== 'gamma') delete o.burstiness;
  if (o.concurrency === undefined) delete o.ramp_up;
  return o;
}

function verdictBanner(s: LoadSummary): string {
  const failing = s.findings.filter((f) => f.level === 'MUST' || f.level === 'COMPAT');
  const regress = s.baseline?.regressions ?? 0;
  // Broken gates and unlike settings have their own banners (verdict-html.ts): never a green one beside them.
  if ((s.gates?.failed ?? 0) > 0 || (s.baseline && !s.baseline.like_for_like)) return '';
  if (failing.length === 0 && regress === 0) return '<div class="banner ok">No MUST-level finding' + (s.baseline ? ', no regression against the baseline' : '') + '.</div>';
  const parts = [];
  // The clauses by name, so the reader knows what failed before scrolling to the table.
  if (failing.length) parts.push(`${failing.length} MUST-level finding${failing.length === 1 ? '' : 's'}: ${[...new Set(failing.map((f) => f.clause))].join(', ')}`);
  if (regress) parts.push(`${regress} regression${regress === 1 ? '' : 's'} against the baseline`);
  return `<div class="banner fail"><b>${esc(parts.join(', '))}</b>${failing.length ? ' (<a href="#findings">Findings</a>)' : ''}</div>`;
}

function metricsTable(s: LoadSummary): string {
  const rows = Object.entries(s.metrics).map(([k, v]) => {
    const info = isMetricName(k) ? METRICS[k] : undefined;
    return `<tr><td><code>${esc(k)}</code></td><td class="nw">${v === null || v === undefined ? '–' : fmt(v)}</td><td class="nw">${esc(info?.unit ?? '')}</td><td class="txt">${esc(info?.description ?? '')}</td></tr>`;
  });
  return `<table><tr><th>metric</th><th>value</th><th>unit</th><th style="text-align:left">meaning</th></tr>${rows.join('')}</table>`;
}

function baselineTable(s: LoadSummary): string {
  const b = s.baseline!;
  const rows = b.rows.map((r) => `<tr><td><code>${esc(r.metric)}</code></td><td>${r.baseline ?? '–'}</td><td>${r.current ?? '–'}</td><td>${r.change === null ? '–' : `${(r.change * 100).toFixed(1)} %`}</td><td>${r.allowed ?? '–'}</td><td class="${r.verdict === 'regression' ? 'lvl-MUST' : ''}">${esc(r.verdict)}</td></tr>`);
  return `<p class="muted">against ${esc(b.baseline_file)} ${esc(b.baseline_started_at ?? '')}</p><table><tr><th>metric</th><th>baseline</th><th>current</th><th>change</th><th>allowed worse</th><th>verdict</th></tr>${rows.join('')}</table>`;
}

function findingsTable(s: LoadSummary): string {
  if (s.findings.length === 0) return '<p>None: every error answer had a proper body, no 5xx other than 503, no dropped connection, every checked body was valid.</p>';
  const rows = s.findings.map((f) => `<tr><td class="lvl-${f.level}">${esc(f.level)}</td><td>${esc(f.clause)}</td><td>${f.count}</td><td style="text-align:left">${esc(f.message)}${f.example ? `<br><span class="muted">${esc(f.example)}</span>` : ''}${(f.reproduce ?? []).map((c) => `<code>${esc(c)}</code>`).join('')}</td></tr>`);
  return `<table class="findings"><tr><th>level</th><th>clause</th><th>count</th><th style="text-align:left">what</th></tr>${rows.join('')}</table>`;
}

function countsTable(s: LoadSummary): string {
  const failures = Object.entries(s.failures).filter(([, v]) => v > 0);
  return `${kvTable(s.counts as unknown as Record<string, unknown>, { ok: crossedNote(s) })}
<table><tr><th>status</th><th>count</th></tr>${Object.entries(s.status_codes).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>
${failures.length ? `<table><tr><th>failure</th><th>count</th></tr>${failures.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>` : ''}
${s.failure_examples.length ? `<table><tr><th>failure</th><th>status</th><th style="text-align:left">example</th></tr>${s.failure_examples.map((e) => `<tr><td>${esc(e.kind)}</td><td>${e.status ?? '–'}</td><td style="text-align:left">${esc(e.detail)}</td></tr>`).join('')}</table>` : ''}
${Object.keys(s.routes).length > 1 ? `<table><tr><th>route</th><th>sent</th><th>ok</th><th>p50 ms</th><th>p95 ms</th><th>statuses</th></tr>${Object.entries(s.routes).map(([k, v]) => { const r = v as { sent: number; ok: number; p50_ms: number; p95_ms: number; status_codes: Record<string, number> }; return `<tr><td>${esc(k)}</td><td>${r.sent}</td><td>${r.ok}</td><td>${r.p50_ms}</td><td>${r.p95_ms}</td><td>${esc(JSON.stringify(r.status_codes))}</td></tr>`; }).join('')}</table>` : ''}
${s.output ? `<h3>Output</h3>${kvTable(s.output)}` : ''}
${s.tokens ? `<h3>Tokens</h3>${kvTable(s.tokens)}` : ''}
${s.workload ? `<h3>Workload</h3>${kvTable(s.workload)}` : ''}
${s.requests_log ? `<p class="muted">per request: <code>${esc(s.requests_log.file)}</code> beside this report (${s.requests_log.lines} lines)</p>` : ''}
<p class="muted">body checks: ${s.body_checks.checked} checked against the schemas, ${s.body_checks.invalid} invalid · error answers: ${s.error_answers.checked} checked, ${s.error_answers.improper} without a proper error body</p>`;
}

function latencyTable(s: LoadSummary): string {
  const cols = ['count', 'min_ms', 'mean_ms', 'p50_ms', 'p90_ms', 'p95_ms', 'p99_ms', 'p999_ms', 'max_ms'] as const;
  const entries = Object.entries(s.latencies).filter(([, v]) => v.count > 0);
  const extra = (s.details as { latency_uncorrected_ms?: Record<string, number> }).latency_uncorrected_ms;
  if (extra && extra.count) entries.push(['latency_uncorrected_ms', extra as never]);
  return `<table><tr><th>ms</th>${cols.map((c) => `<th>${c.replace('_ms', '')}</th>`).join('')}</tr>${entries.map(([name, v]) => `<tr><td>${esc(name)}</td>${cols.map((c) => `<td>${fmt((v as unknown as Record<string, number>)[c]!)}</td>`).join('')}</tr>`).join('')}</table>`;
}

function scenarioSection(s: LoadSummary): string {
  const d = s.details as Record<string, unknown>;
  if (s.scenario === 'sweep') {
    const steps = (d.steps ?? []) as Array<Record<string, unknown>>;
    const cols = ['step', 'phase', 'offered', 'sent_rps', 'completed_rps', 'backlog_at_end', 'samples', 'goodput_rps', 'ttft_p50_ms', 'ttft_p95_ms', 'itl_p95_ms', 'tpot_p95_ms', 'e2e_p95_ms', 'error_share', 'share_429', 'share_503', 'cache_hit_share', 'valid', 'slo_met'];
    return `<h2>Sweep steps</h2>
<p class="help">Each step's own figures (${esc(String(d.unit))}): sent and completed per second of the step's window, the backlog still in flight at its end, and latency of the requests sent after its settle. Goodput counts only the requests that met every per-request SLO (TTFT, and ITL/E2E when set). The curve bends where the target saturates: the completed rate stops following the offered rate, the backlog grows, TTFT climbs, 429/503 appear.</p>
${table(cols, steps, true)}`;
  }
  if (s.scenario === 'rate-limit') {
    const phases = (d.phases ?? []) as Array<Record<string, unknown>>;
    return `<h2>Rate limit</h2>
<p>Throttled key: <code>${esc(String(d.throttled_key))}</code>; first 429 at an offered <b>${esc(String(d.first_429_offered_rps ?? 'none'))}</b> req/s; most 2xx in one second: ${esc(String(d.max_ok_per_s))}.</p>
${table(['phase', 'offered_rps', 'sent', 'ok', 'status_429', 'status_503', 'status_5xx_other', 'transport_errors', 'ok_rps'], phases)}
<h3>Retry headers on 429</h3>${kvTable(d.retry_headers as Record<string, unknown>)}
<h3>Recovery and retries</h3>${kvTable(d.recovery as Record<string, unknown>)}
${table(['advised_wait_ms', 'source', 'status', 'ok'], (d.honoured_retries ?? []) as Array<Record<string, unknown>>)}
<h3>Second key</h3>${kvTable(d.isolation as Record<string, unknown>)}
<div id="bystander-charts"></div>`;
  }
  return k6DetailsSection(s) ?? `<h2>Run details</h2>${kvTable(d)}`;
}

function table(cols: string[], rows: Array<Record<string, unknown>>, wide = false): string {
  if (rows.length === 0) return '<p class="muted">(none)</p>';
  // Headers break at their underscores, so a wide table fits the page instead of scrolling.
  // A wide table leaves out columns no row fills, so it fits the page.
  if (wide) cols = cols.filter((c) => rows.some((r) => r[c] !== undefined && r[c] !== null));
  return `<table${wide ? ' class="wide"' : ''}><tr>${cols.map((c) => `<th>${esc(c).replace(/_/g, '_<wbr>')}</th>`).join('')}</tr>${rows.map((r) => `<tr>${cols.map((c) => `<td>${cell(r[c])}</td>`).join('')}</tr>`).join('')}</table>`;
}

/** `notes`: a warning beside a row's value (the crossed replies beside ok). */
function kvTable(obj: Record<string, unknown> | null | undefined, notes: Record<string, string | undefined> = {}): string {
  if (!obj) return '';
  return `<table>${Object.entries(obj).filter(([, v]) => v !== undefined).map(([k, v]) => `<tr><td>${esc(k)}</td><td class="txt">${cell(v)}${notes[k] ? ` <span class="lvl-MUST">${esc(notes[k]!)}</span>` : ''}</td></tr>`).join('')}</table>`;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return fmt(v);
  if (typeof v === 'object') return `<code>${esc(JSON.stringify(v))}</code>`;
  return esc(String(v));
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) >= 100 ? n.toFixed(1) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3);
}

function esc(s: string): string {
  return redact(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

// The charts, drawn in the browser from the embedded data (uPlot needs a DOM). Each
// chart's div carries data-points (the values it drew), which the Chromium self-test reads.
const CHART_CODE = String.raw`
(function () {
  var D = JSON.parse(document.getElementById('data').textContent);
  var COLORS = ['#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#17becf', '#e377c2', '#7f7f7f'];
  var SLO_COLOR = '` + SLO_COLOR + String.raw`';
  var PHASES = (D.plots.extra && D.plots.extra.phases) || [];
  function div(parentId) { var p = document.getElementById(parentId); var d = document.createElement('div'); d.className = 'chart'; p && p.appendChild(d); return d; }
  function widthOf(el) { return Math.max(300, Math.min(el.clientWidth || 900, 1200) - 4); }
  function series(list) { return [{}].concat(list.map(function (s, i) {
    var c = s.color || COLORS[i % COLORS.length];
    var o = { label: s.label, stroke: c, width: s.width || 2, scale: s.scale || 'y', spanGaps: false, points: { show: !!s.points, size: s.points === 'dots' ? 4 : 6, fill: c, stroke: c } };
    if (s.points === 'dots') { o.paths = function () { return null; }; o.width = 0; }
    if (s.bars) { o.paths = uPlot.paths.bars({ size: [0.92, 80], align: 0 }); o.fill = c + '88'; o.width = 1; }
    if (s.dash) o.dash = [6, 4];
    return o; })); }
  // Horizontal SLO lines in their own colour, labelled with their value; vertical lines where phases begin.
  function overlays(opts) {
    return { hooks: { draw: [function (u) {
      var ctx = u.ctx; ctx.save();
      (opts.slos || []).forEach(function (l) {
        var y = u.valToPos(l.value, 'y', true);
        if (!(y >= u.bbox.top && y <= u.bbox.top + u.bbox.height)) return;
        ctx.strokeStyle = SLO_COLOR; ctx.lineWidth = 2 * devicePixelRatio; ctx.setLineDash([8 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
        ctx.setLineDash([]); ctx.fillStyle = SLO_COLOR; ctx.font = 'bold ' + (12 * devicePixelRatio) + 'px system-ui,sans-serif'; ctx.textAlign = 'left';
        ctx.fillText(l.label, u.bbox.left + 8 * devicePixelRatio, y - 5 * devicePixelRatio);
      });
      if (opts.phases) opts.phases.forEach(function (p, i) {
        var x = u.valToPos(p.t_s, 'x', true);
        if (!(x >= u.bbox.left && x <= u.bbox.left + u.bbox.width)) return;
        ctx.strokeStyle = '#555'; ctx.lineWidth = devicePixelRatio; ctx.setLineDash([3 * devicePixelRatio, 3 * devicePixelRatio]);
        ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
        ctx.setLineDash([]); ctx.fillStyle = '#444'; ctx.font = (11 * devicePixelRatio) + 'px system-ui,sans-serif'; ctx.textAlign = 'left';
        ctx.fillText(p.short || String(i + 1), x + 3 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
      });
      ctx.restore();
    }] } };
  }
  function spansDecades(values) {
    var lo = Infinity, hi = 0;
    values.forEach(function (v) { if (v != null && v > 0) { if (v < lo) lo = v; if (v > hi) hi = v; } });
    return hi > 0 && hi / lo >= 20;
  }
  function plot(parentId, title, x, list, xLabel, yLabel, extra) {
    extra = extra || {};
    var el = div(parentId);
    // A series with nothing to draw (no failures, say) stays out of the chart and its legend.
    list = list.filter(function (s) { return s.ref || s.values.some(function (v) { return v != null; }); });
    var n = 0; list.forEach(function (s) { if (s.scale !== 'y2' && !s.ref) s.values.forEach(function (v) { if (v != null) n++; }); });
    el.setAttribute('data-points', String(n));
    el.setAttribute('data-title', title);
    if (!x.length || n === 0) { el.innerHTML = '<p class="muted">' + title + ': no data</p>'; return; }
    var ys = []; list.forEach(function (s) { if (s.scale !== 'y2') ys = ys.concat(s.values); });
    var dataMax = 0; ys.forEach(function (v) { if (v != null && v > dataMax) dataMax = v; });
    // An SLO within reach of the data is drawn inside the chart; one far above it only named.
    var above = (extra.slos || []).filter(function (l) { return l.value > dataMax * 2.5; });
    extra.slos = (extra.slos || []).filter(function (l) { return above.indexOf(l) < 0; });
    extra.slos.forEach(function (l) { ys.push(l.value); });
    // An SLO far above the data is named over the chart, so the data keeps the chart's height.
    if (above.length) { var note = document.createElement('div'); note.className = 'slo-note'; note.textContent = above.map(function (l) { return '\u2191 ' + l.label + ': above all the data'; }).join(' · '); el.appendChild(note); }
    var ylog = extra.ylog === 'auto' ? spansDecades(ys) : !!extra.ylog;
    var yMax = 0; ys.forEach(function (v) { if (v != null && v > yMax) yMax = v; });
    // A legend of the series' names (live values would repeat the axes).
    var opts = { title: title, width: widthOf(el), height: extra.height || 260, legend: { live: false },
      cursor: { drag: { x: true, y: false } },
      scales: { x: { time: false }, y: ylog ? { distr: 3, range: function (u, lo, hi) { return [Math.pow(10, Math.floor(Math.log10(lo))), hi * 1.25]; } } : { range: function (u, lo, hi) { return [Math.min(0, lo), Math.max(hi, yMax) * 1.08 || 1]; } } },
      axes: [ { label: xLabel, splits: extra.xSplits, values: extra.xValues }, { label: yLabel + (ylog ? ' (log)' : ''), size: 60 } ],
      series: series(list), plugins: [overlays(extra)] };
    if (extra.xRange) opts.scales.x.range = function () { return extra.xRange; };
    // Over-time charts start at 0 s, so the first phase's mark shows.
    else if (extra.phases && extra.phases.length) opts.scales.x.range = function (u, lo, hi) { return [Math.min(0, lo), hi]; };
    if (extra.xlog) opts.scales.x.distr = 3;
    if (extra.y2) { opts.scales.y2 = { range: function (u, lo, hi) { return [0, Math.max(hi, 1) * 1.08]; } }; opts.axes.push({ side: 1, scale: 'y2', label: extra.y2, grid: { show: false }, size: 60 }); }
    new uPlot(opts, [x].concat(list.map(function (s) { return s.values; })), el);
  }
  var sloOf = function (metric) { return (D.slo || []).filter(function (l) { return l.metric === metric; }); };
  var sweep = D.scenario === 'sweep';
  // Each phase named by its value ("8 req/s" of "sweep step 3/8: 8 req/s"), else its number.
  var phaseMarks = PHASES.map(function (p, i) { var m = /:\s*(.+)$/.exec(p.label); return { t_s: p.t_s, short: m ? m[1].replace(/ \(re-run\)$/, '*') : String(i + 1), label: p.label }; });
  var withPhases = function (o) { o.phases = phaseMarks; return o; };

  // --- over the run -------------------------------------------------------------------
  var R = D.plots.extra && D.plots.extra.requests;
  var stream = D.scenario === 'stream' || D.scenario === 'sweep';
  if (R && R.points.length) {
    var pts = R.points.slice().sort(function (a, b) { return a[0] - b[0]; });
    var ok = function (p) { return p[3] >= 200 && p[3] < 300 && (!stream || p[1] != null); };
    var list = stream ? [
      { label: 'TTFT', values: pts.map(function (p) { return ok(p) ? p[1] : null; }), points: 'dots', color: '#1f77b4' },
      { label: 'E2E', values: pts.map(function (p) { return ok(p) ? p[2] : null; }), points: 'dots', color: '#2ca02c' },
      { label: 'failed (time to failure)', values: pts.map(function (p) { return ok(p) ? null : p[2]; }), points: 'dots', color: '#d62728' }
    ] : [
      { label: 'latency', values: pts.map(function (p) { return ok(p) ? p[2] : null; }), points: 'dots', color: '#1f77b4' },
      { label: 'failed', values: pts.map(function (p) { return ok(p) ? null : p[2]; }), points: 'dots', color: '#d62728' }
    ];
    plot('run-charts', (stream ? 'TTFT and E2E of each request' : 'Latency of each request') + ' by send time' + (R.of > R.points.length ? ' (an even sample: ' + R.points.length + ' of ' + R.of + ')' : ''),
      pts.map(function (p) { return p[0]; }), list, 'send time (s)', 'ms', withPhases({ ylog: 'auto', slos: sloOf('ttft').concat(sloOf('e2e')), height: 300 }));
  }
  var T = D.timeline || [];
  if (T.length) {
    var x = T.map(function (p) { return p.t_s; });
    function byStatus(test) { return T.map(function (p) { var n = 0; for (var k in p.status) if (test(+k)) n += p.status[k]; return n; }); }
    var lines = [
      { label: 'sent/s', values: T.map(function (p) { return p.sent; }), color: '#7f7f7f', dash: true },
      { label: 'ok/s', values: T.map(function (p) { return p.ok; }), color: '#2ca02c' },
      { label: '429/s', values: byStatus(function (s) { return s === 429; }), color: '#ff7f0e' },
      { label: '503/s', values: byStatus(function (s) { return s === 503; }), color: '#9467bd' },
      { label: 'other 5xx/s', values: byStatus(isServerError), color: '#d62728' },
      { label: 'other 4xx/s', values: byStatus(function (s) { return s >= 400 && s < 500 && s !== 429; }), color: '#8c564b' },
      { label: 'failures/s', values: T.map(function (p) { return p.failures; }), color: '#e377c2' }
    ].filter(function (l, i) { return i < 2 || l.values.some(function (v) { return v > 0; }); });
    var hasFlight = T.some(function (p) { return p.in_flight != null; });
    if (hasFlight) lines.push({ label: 'in flight', values: T.map(function (p) { return p.in_flight == null ? null : p.in_flight; }), color: '#111', scale: 'y2', width: 1.5 });
    plot('run-charts', 'Answers per second by status' + (hasFlight ? ', and requests in flight' : ''), x, lines, 'time (s)', 'per second', withPhases(hasFlight ? { y2: 'in flight' } : {}));
    var metric = stream ? 'TTFT' : 'Latency';
    plot('run-charts', metric + ' by send second (p50, p95 of the requests due in that second; a gap: none answered)', x, [
      { label: 'p50', values: T.map(function (p) { return p.p50_ms; }), color: '#1f77b4' },
      { label: 'p95', values: T.map(function (p) { return p.p95_ms; }), color: '#ff7f0e' }], 'send time (s)', 'ms', withPhases({ slos: stream ? sloOf('ttft') : [] }));
    if (T.some(function (p) { return p.output_tokens > 0; })) {
      plot('run-charts', 'Output tokens per second (answers completed in that second)', x, [
        { label: 'output tokens/s', values: T.map(function (p) { return p.output_tokens; }), color: '#9467bd' }], 'time (s)', 'tokens/s', withPhases({}));
    }
  }
  if (sweep) {
    var steps = (D.details.steps || []).slice().sort(function (a, b) { return a.offered - b.offered; });
    if (steps.length) {
      var sx = steps.map(function (r) { return r.offered; });
      plot('sweep-charts', 'TTFT vs offered', sx, [
        { label: 'TTFT p50', values: steps.map(function (r) { return r.ttft_p50_ms; }), points: true, color: '#1f77b4' },
        { label: 'TTFT p95', values: steps.map(function (r) { return r.ttft_p95_ms; }), points: true, color: '#ff7f0e' }],
        'offered (' + D.details.unit + ')', 'ms', { slos: sloOf('ttft') });
    }
  }

  // --- distributions ------------------------------------------------------------------
  // Percentile plots: x = -log10(1 - p), so 90 %, 99 %, 99.9 % are evenly spaced.
  function px(p) { return -Math.log10(1 - Math.min(p, 99.999) / 100); }
  function pLabel(v) { var p = 100 * (1 - Math.pow(10, -v)); return (p >= 99 ? p.toFixed(Math.max(0, Math.round(v) - 2)) : p.toFixed(0)) + '%'; }
  var pct = D.plots.percentiles || {};
  var names = Object.keys(pct).filter(function (n) { return pct[n].percentile.length; });
  var GROUPS = [['ttft_ms', 'ttst_ms', 'ttfa_ms', 'first_event_ms'], ['itl_ms', 'tpot_ms'], ['latency_ms', 'latency_uncorrected_ms']];
  var groups = [];
  GROUPS.forEach(function (p) { var g = p.filter(function (n) { return names.indexOf(n) >= 0; }); if (g.length) groups.push(g); });
  names.forEach(function (n) { if (!groups.some(function (g) { return g.indexOf(n) >= 0; })) groups.push([n]); });
  var sloMetric = { ttft_ms: 'ttft', e2e_ms: 'e2e', itl_ms: 'itl' };
  groups.forEach(function (g) {
    // The longest curve sets the x axis; shorter ones stop where their samples stop (null after).
    var base = g.reduce(function (a, n) { return pct[n].percentile.length > pct[a].percentile.length ? n : a; }, g[0]);
    var ps = pct[base].percentile;
    var top = px(ps[ps.length - 1]);
    plot('percentile-charts', g.join(' · ') + ' by percentile', ps.map(px),
      g.map(function (n, i) { var m = {}; pct[n].percentile.forEach(function (p, k) { m[p] = pct[n].value_ms[k]; });
        return { label: n, values: ps.map(function (p) { return p in m ? m[p] : null; }), dash: i > 0, points: true }; }), 'percentile', 'ms',
      { xSplits: function () { var s = []; for (var k = 0; k <= Math.floor(top + 1e-9); k++) s.push(k); return s; }, xValues: function (u, v) { return v.map(pLabel); },
        slos: sloOf(sloMetric[g[0]] || '') });
  });
  var buckets = D.plots.buckets || {};
  ['ttft_ms', 'ttfa_ms', 'itl_ms', 'e2e_ms', 'tpot_ms', 'latency_ms'].filter(function (n) { return buckets[n] && buckets[n].count.length; }).forEach(function (n) {
    var b = buckets[n], e = b.bucket_ms, top = b.upper_ms != null ? b.upper_ms : e[e.length - 1] + (e.length > 1 ? e[1] - e[0] : 1);
    var edges = e.concat([top]);
    var mid = e.map(function (v, i) { return b.log ? Math.sqrt(v * edges[i + 1]) : (v + edges[i + 1]) / 2; });
    plot('bucket-charts', n + ' histogram' + (b.log ? ' (log bins)' : ''), mid, [{ label: 'requests', values: b.count, bars: true }], 'ms' + (b.log ? ' (log)' : ''), 'count',
      { xRange: [e[0], top], xlog: !!b.log, height: 220 });
  });

  var by = D.plots.extra && D.plots.extra.bystander_timeline;
  if (by && by.length) {
    plot('bystander-charts', 'Second key per second', by.map(function (p) { return p.t_s; }), [
      { label: 'ok/s', values: by.map(function (p) { return p.ok; }), color: '#2ca02c' },
      { label: 'failures/s', values: by.map(function (p) { return p.failures; }), color: '#d62728' }], 's', 'per second');
  }
  // Report modules' own sections draw with these.
  window.chatgateReport = { D: D, plot: plot, div: div, SLO_COLOR: SLO_COLOR, phases: phaseMarks };
})();
`;
